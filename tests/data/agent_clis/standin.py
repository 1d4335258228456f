"""Shared logic of the `claude` and `codex` stand-ins used by evoteam's tests.

A stand-in parses the command line the real CLI documents for headless use, connects as an MCP client
(the official `mcp` Python SDK) to the stdio servers its configuration names, and plays a scripted story
instead of asking a model. It prints the event stream the real CLI prints, one JSON object a line, each
flushed as it happens, and writes a human-readable transcript of what it did to stderr.

How tests use it: a test writes a tiny wrapper named `claude` or `codex` into a temporary bin directory
that it puts first on PATH:

    #!/bin/sh
    export EVOTEAM_STANDIN_STORY=/abs/story.json
    exec /path/to/python3 /abs/tests/data/agent_clis/claude "$@"

The python3 named there must have the `mcp` package; EVOTEAM_STANDIN_STORY names the story (see README.md
in this directory for its format). The stand-in never prints the value of any key it was given.
"""

import argparse
import json
import os
import sys
import time
import tomllib
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

STORY_ENV = "EVOTEAM_STANDIN_STORY"
# How long a stand-in waits for an MCP server to answer `initialize`; both CLIs give up after some seconds.
MCP_STARTUP_TIMEOUT_S = 30.0
# tool_until_turn_ends stops by itself after this many calls, so a server that never refuses cannot make
# the stand-in print forever when nothing kills it.
MAX_REPEATED_CALLS = 1000
USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


class UsageError(Exception):
    """A command line the real CLI would refuse."""


class StrictParser(argparse.ArgumentParser):
    """argparse that refuses abbreviations and unknown flags with exit 2 and a usage line."""

    def __init__(self, **kwargs):
        super().__init__(allow_abbrev=False, **kwargs)

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def transcript(cli_name, text):
    sys.stderr.write(f"[{cli_name} stand-in] {text}\n")
    sys.stderr.flush()


def emit(event):
    sys.stdout.write(json.dumps(event, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def load_story():
    path = os.environ.get(STORY_ENV)
    if not path:
        raise UsageError(f"{STORY_ENV} is not set: the stand-in needs a story to play")
    with open(path, encoding="utf-8") as f:
        story = json.load(f)
    if not isinstance(story.get("steps"), list):
        raise UsageError(f"story {path} has no list of steps")
    return story


@dataclass
class ServerSpec:
    name: str
    command: str
    args: list
    env: dict | None
    cwd: str | None = None


@dataclass
class ToolOutcome:
    """What the server answered to one tools/call: MCP content blocks, or a protocol error's message."""

    content: list = field(default_factory=list)
    is_error: bool = False
    protocol_error: str | None = None

    def text(self):
        if self.protocol_error is not None:
            return self.protocol_error
        return "\n".join(block.get("text", "") for block in self.content if block.get("type") == "text")


class McpConnections:
    """The stand-in's MCP client side: one SDK ClientSession per configured stdio server."""

    def __init__(self, cli_name):
        self.cli_name = cli_name
        self.sessions = {}
        self.failed = {}
        self.stack = AsyncExitStack()

    async def connect(self, specs):
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        for spec in specs:
            params = StdioServerParameters(command=spec.command, args=list(spec.args), env=spec.env, cwd=spec.cwd)
            try:
                # The timeout covers the handshake only: the transport's task groups live on in the exit stack.
                read, write = await self.stack.enter_async_context(stdio_client(params, errlog=sys.stderr))
                session = await self.stack.enter_async_context(ClientSession(read, write))
                with anyio.fail_after(MCP_STARTUP_TIMEOUT_S):
                    await session.initialize()
                    listing = await session.list_tools()
                self.sessions[spec.name] = session
                names = ", ".join(tool.name for tool in listing.tools)
                transcript(self.cli_name, f"connected to MCP server {spec.name!r}: tools {names}")
            except BaseException as exc:  # the SDK raises exception groups; a failed server is reported, not fatal
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                self.failed[spec.name] = describe_exception(exc)
                transcript(self.cli_name, f"MCP server {spec.name!r} failed to start: {self.failed[spec.name]}")

    def default_server(self):
        if self.sessions:
            return next(iter(self.sessions))
        if self.failed:
            return next(iter(self.failed))
        return "evoteam"

    async def call(self, server, tool, arguments):
        from mcp import MCPError

        session = self.sessions.get(server)
        if session is None:
            return ToolOutcome(is_error=True, protocol_error=f"MCP server {server!r} is not connected")
        try:
            result = await session.call_tool(tool, arguments)
        except MCPError as exc:
            return ToolOutcome(is_error=True, protocol_error=f"MCP error {exc.error.code}: {exc.error.message}")
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            return ToolOutcome(is_error=True, protocol_error=f"MCP call failed: {describe_exception(exc)}")
        content = [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
        return ToolOutcome(content=content, is_error=bool(result.is_error))

    async def close(self):
        try:
            await self.stack.aclose()
        except BaseException as exc:  # shutting a server down must not change the stand-in's exit status
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            transcript(self.cli_name, f"closing MCP servers: {describe_exception(exc)}")


def describe_exception(exc):
    inner = getattr(exc, "exceptions", None)
    if inner:
        return describe_exception(inner[0])
    return f"{type(exc).__name__}: {exc}"


def resolve_in(cwd, path):
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd, path))


def apply_edit(cwd, edit):
    """Replaces one exact occurrence of `old` by `new` in a file, as both CLIs' edit tools do.

    Returns (absolute path, None) on success or (absolute path, error message)."""
    path = resolve_in(cwd, edit["file"])
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        return path, f"{exc.strerror}: {path}"
    count = text.count(edit["old"])
    if count == 0:
        return path, f"String to replace not found in file.\nString: {edit['old']}"
    if count > 1:
        return path, f"Found {count} matches of the string to replace, but replace_all is false."
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(edit["old"], edit["new"], 1))
    except OSError as exc:
        return path, f"{exc.strerror}: {path}"
    return path, None


def apply_write(cwd, write):
    """Writes a whole file, wherever it is: the sandbox around the CLI decides whether that is allowed.

    Returns (absolute path, existed before, None) on success or (absolute path, existed, error message)."""
    path = resolve_in(cwd, write["path"])
    existed = os.path.exists(path)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(write["content"])
    except OSError as exc:
        return path, existed, f"{exc.strerror}: {path}"
    return path, existed, None


class Meter:
    """Sums what the stand-in reports, so its final event carries exactly the per-step numbers."""

    def __init__(self, story):
        per_step = story.get("usage_per_step", {})
        self.per_step = {key: int(per_step.get(key, 0)) for key in USAGE_KEYS}
        self.cost_per_step = float(story.get("cost_per_step_usd", 0.0))
        self.total = {key: 0 for key in USAGE_KEYS}
        self.cost = 0.0
        self.model_steps = 0

    def step(self, step):
        """Charges one model step; a step may carry its own "usage" and "cost_usd" instead of the story's."""
        override = step.get("usage", {})
        usage = {key: int(override.get(key, self.per_step[key])) for key in USAGE_KEYS}
        cost = float(step.get("cost_usd", self.cost_per_step))
        for key in USAGE_KEYS:
            self.total[key] += usage[key]
        self.cost += cost
        self.model_steps += 1
        return usage, cost

    def total_cost(self):
        return round(self.cost, 12)


def print_crash(exit_code):
    """A CLI that dies mid-line: half an event, no newline, then the exit."""
    sys.stdout.write('{"type":"assistant","message":{"id":"msg_trunc')
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)


def hang_forever(cli_name):
    sys.stdout.flush()
    transcript(cli_name, "hanging until killed")
    while True:
        time.sleep(3600)


def exit_without_end(exit_code):
    """Ends the process with no final event, as a CLI that quits early would."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)


def print_garbage(text):
    for line in str(text).splitlines() or [""]:
        sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def play_story(cli, story):
    """Plays every step through the CLI-specific renderer `cli`; returns the process exit status."""
    for step in story["steps"]:
        if "tool" in step:
            if not await cli.tool_step(step, step["tool"], step.get("arguments", {})):
                return cli.finish_early()
        elif "tool_until_turn_ends" in step:
            name = step["tool_until_turn_ends"]
            for _ in range(MAX_REPEATED_CALLS):
                if not cli.may_take_step():
                    return cli.finish_early()
                outcome = await cli.tool_step(step, name, step.get("arguments", {}))
                if outcome is False:
                    return cli.finish_early()
                if outcome.is_error:
                    break
        elif "edit" in step:
            if not cli.edit_step(step):
                return cli.finish_early()
        elif "write" in step:
            if not cli.write_step(step):
                return cli.finish_early()
        elif "say" in step:
            if not cli.say_step(step):
                return cli.finish_early()
        elif step.get("hang"):
            hang_forever(cli.name)
        elif "crash" in step:
            print_crash(int(step["crash"].get("exit_code", 1)))
        elif "garbage" in step:
            print_garbage(step["garbage"])
        elif "exit" in step:
            return exit_without_end(int(step["exit"].get("code", 0)))
        elif step.get("auth_error"):
            return cli.auth_error()
        else:
            raise UsageError(f"unknown story step: {json.dumps(step)}")
    return cli.finish()


def key_state(variable_names):
    """Which of the key variables are set, never their values (for the transcript)."""
    present = [name for name in variable_names if os.environ.get(name)]
    return ", ".join(present) if present else "none"


def new_id(prefix=""):
    return prefix + uuid.uuid4().hex[:24]


def parse_toml_value(raw):
    """Reads a `-c key=value` value as codex does: TOML if it parses, else the literal string."""
    try:
        return tomllib.loads("x = " + raw)["x"]
    except tomllib.TOMLDecodeError:
        return raw


def set_dotted(config, dotted_key, value):
    parts = [part.strip().strip('"') for part in dotted_key.split(".")]
    node = config
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = value


def now_ms():
    return int(time.monotonic() * 1000)
