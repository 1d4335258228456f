"""Drives `evoteam mcp` with the official MCP Python SDK, as a person's agent (or a CLI) would.

    python sdk_client.py --mode auto|legacy --calls CALLS.json -- EVOTEAM mcp --run RUN --workspace DIR

`auto` is the SDK's default client: it probes the stateless revision (server/discover) and falls back to the
initialize handshake; `legacy` is the handshake ClientSession. CALLS.json is a list of [tool, arguments]. Prints one
JSON object: the negotiated protocol version, the server's tools, and each call's text and isError (or the
protocol error it raised, with its code). Exits non-zero only when the session itself cannot be set up.
"""

import argparse
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


def call_result(result):
    text = "".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    return {"text": text, "is_error": bool(result.is_error)}


async def run_calls(session, calls):
    answers = []
    for tool, arguments in calls:
        try:
            answers.append(call_result(await session.call_tool(tool, arguments)))
        except MCPError as error:
            answers.append({"protocol_error": error.code, "message": str(error)})
    return answers


async def legacy(server, calls):
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            initialized = await session.initialize()
            tools = await session.list_tools()
            return {"protocol_version": initialized.protocol_version,
                    "server": initialized.server_info.name,
                    "tools": [tool.name for tool in tools.tools],
                    "calls": await run_calls(session, calls)}


async def auto(server, calls):
    from mcp.client.client import Client  # the SDK's high-level client: discover, else handshake

    async with Client(server) as client:
        tools = await client.list_tools()
        answers = []
        for tool, arguments in calls:
            try:
                answers.append(call_result(await client.call_tool(tool, arguments)))
            except MCPError as error:
                answers.append({"protocol_error": error.code, "message": str(error)})
        return {"protocol_version": client.protocol_version,
                "tools": [tool.name for tool in tools.tools],
                "calls": answers}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["auto", "legacy"], default="legacy")
    parser.add_argument("--calls", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(args.calls, encoding="utf-8") as handle:
        calls = json.load(handle)
    server = StdioServerParameters(command=command[0], args=command[1:])
    drive = auto if args.mode == "auto" else legacy
    print(json.dumps(asyncio.run(drive(server, calls))))


if __name__ == "__main__":
    sys.exit(main())
