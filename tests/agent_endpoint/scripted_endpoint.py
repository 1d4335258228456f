#!/usr/bin/env python3
"""A model endpoint that plays a story, for driving the real coding-agent CLIs (Claude Code, Codex) in tests.

A loopback HTTP server speaking the Anthropic Messages API (POST /v1/messages, streamed as SSE or whole JSON;
POST /v1/messages/count_tokens; the HEAD / GET connectivity probe; GET /v1/models/<id>, which evoteam's own loop
asks before a run) and the OpenAI Responses API (POST /v1/responses as SSE; GET /v1/models). It answers the main
conversation from a story file and every side request (titles, topic checks, quota probes: requests that carry no
tools) with a short text, and writes a ledger: one JSON line per request served, with the story step that answered,
the usage its reply reported and whether the reply went out whole.

    scripted_endpoint.py --story STORY.json --ledger LEDGER.jsonl [--port 0] [--port-file F] [-- COMMAND ...]

With a COMMAND it runs it once the server listens, with ENDPOINT_URL=http://127.0.0.1:PORT in its environment and
every "{endpoint}" in its words replaced, then stops and exits with the command's status (so a test can start the
server and the CLI's user inside one network namespace). Standard library only. tests/agent_endpoint/README.md
describes the story format.
"""

import argparse
import json
import os
import re
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import http.server

EVO = "evo"  # the marker in every tool call id this endpoint makes: toolu_evo_s<step>_<i>, call_evo_s<step>_<i>
MARK = re.compile(r"(?:toolu|call)_evo_s(\d+)_(\d+)")


class Story:
    def __init__(self, path):
        with open(path) as f:
            data = json.load(f)
        self.data = data
        self.model = data.get("model", "")
        self.usage = data.get("usage", {"input_tokens": 1000, "output_tokens": 100})
        self.side = data.get("side_reply", {"text": "Kernel work", "usage": {"input_tokens": 50, "output_tokens": 5}})
        self.final = data.get("after_steps", {"text": "Done."})
        conversations = data.get("conversations")
        if conversations is None:
            conversations = [{"name": "main", "match": "", "steps": data.get("steps", [])}]
        self.conversations = conversations

    def conversation_for(self, user_text):
        for index, conversation in enumerate(self.conversations):
            if re.search(conversation.get("match", ""), user_text, re.S):
                return index, conversation
        return None, None


class Ledger:
    def __init__(self, path):
        self.lock = threading.Lock()
        self.seq = 0
        self.out = open(path, "a", buffering=1)

    def write(self, entry):
        with self.lock:
            self.seq += 1
            entry = dict(seq=self.seq, time=round(time.time(), 3), **entry)
            self.out.write(json.dumps(entry, sort_keys=True) + "\n")
            self.out.flush()
            os.fsync(self.out.fileno())


def norm_usage(usage, protocol):
    """The usage as the four counts evoteam keeps: input (uncached), output, cache_read, cache_write."""
    usage = usage or {}
    if protocol == "openai":
        cached = int(usage.get("cache_read_input_tokens", usage.get("cached_tokens", 0)))
        return {"input": int(usage.get("input_tokens", 0)), "output": int(usage.get("output_tokens", 0)),
                "cache_read": cached, "cache_write": 0}
    return {"input": int(usage.get("input_tokens", 0)), "output": int(usage.get("output_tokens", 0)),
            "cache_read": int(usage.get("cache_read_input_tokens", 0)),
            "cache_write": int(usage.get("cache_creation_input_tokens", 0))}


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content
                         if isinstance(block, dict) and block.get("type") in ("text", "input_text"))
    return ""


class Conversation:
    """What a request's history says: who is talking, which step comes next, which tool results came back."""

    def __init__(self, protocol, body):
        self.protocol = protocol
        self.user_text = ""
        self.calls = {}  # step -> number of calls the endpoint made in that step
        self.results = {}  # step -> number of results the client returned for them
        self.model_turns = 0
        if protocol == "anthropic":
            for message in body.get("messages", []) or []:
                content = message.get("content")
                if message.get("role") == "user":
                    self.user_text += text_of(content) + "\n"
                    for block in content if isinstance(content, list) else []:
                        if isinstance(block, dict) and block.get("type") == "tool_result":
                            self.count(self.results, block.get("tool_use_id", ""))
                elif message.get("role") == "assistant":
                    self.model_turns += 1
                    for block in content if isinstance(content, list) else []:
                        if isinstance(block, dict) and block.get("type") == "tool_use":
                            self.count(self.calls, block.get("id", ""))
        else:
            items = body.get("input", [])
            if isinstance(items, str):
                items = [{"type": "message", "role": "user", "content": items}]
            for item in items or []:
                if not isinstance(item, dict):
                    continue
                kind = item.get("type", "message")
                if kind == "message" and item.get("role") in ("user", "developer"):
                    self.user_text += text_of(item.get("content")) + "\n"
                elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
                    self.count(self.calls, item.get("call_id", ""))
                elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                    self.count(self.results, item.get("call_id", ""))

    @staticmethod
    def count(table, ident):
        found = MARK.search(ident or "")
        if found:
            step = int(found.group(1))
            table[step] = table.get(step, 0) + 1

    def next_step(self):
        return max(self.calls) + 1 if self.calls else 0

    def missing_results(self):
        if not self.calls:
            return 0
        last = max(self.calls)
        return self.calls[last] - self.results.get(last, 0)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-endpoint/1"

    def log_message(self, *args):
        pass

    # --- plumbing ---------------------------------------------------------------------------------------------

    def record(self, **entry):
        entry.setdefault("method", self.command)
        entry.setdefault("path", self.path)
        self.server.ledger.write(entry)

    def send_json(self, status, value, headers=None):
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, val in (headers or {}).items():
            self.send_header(key, val)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, event, data):
        payload = data if isinstance(data, str) else json.dumps(data)
        self.wfile.write(("event: %s\ndata: %s\n\n" % (event, payload)).encode())
        self.wfile.flush()

    def cut_connection(self):
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    def error_body(self, protocol, status, message):
        if protocol == "openai":
            code = {401: "invalid_api_key", 400: "invalid_request"}.get(status, "server_error")
            return {"error": {"message": message, "type": "invalid_request_error", "code": code, "param": None}}
        kind = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def refuse(self, protocol, why, body=None):
        self.record(kind="unmatched", status=400, sent="whole", usage=norm_usage({}, protocol), why=why)
        self.send_json(400, self.error_body(protocol, 400, "scripted endpoint: " + why))

    def hang(self):
        # Silent until the client goes away or the server stops.
        self.connection.settimeout(1.0)
        while not self.server.stopping.is_set():
            try:
                if self.connection.recv(1) == b"":
                    return
            except socket.timeout:
                continue
            except OSError:
                return

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            import gzip
            raw = gzip.decompress(raw)
        elif encoding == "zstd":
            try:
                import compression.zstd as zstd  # Python 3.14
                raw = zstd.decompress(raw)
            except ImportError:
                return None, "a zstd-compressed body this Python cannot read"
        try:
            return json.loads(raw or b"{}"), None
        except ValueError as error:
            return None, "the body is not JSON: %s" % error

    def capture(self, body):
        if self.server.requests_dir:
            name = os.path.join(self.server.requests_dir, "%06d.json" % (self.server.ledger.seq + 1))
            with open(name, "w") as f:
                json.dump({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}, f)

    # --- routes -----------------------------------------------------------------------------------------------

    def do_HEAD(self):
        self.record(kind="probe", status=200, sent="whole", usage=norm_usage({}, "anthropic"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.rstrip("/").endswith("/models"):
            model = self.server.story.model or "scripted-model"
            self.record(kind="models", status=200, sent="whole", usage=norm_usage({}, "openai"))
            # Both shapes: OpenAI's list (data) and Codex's own catalogue (models).
            return self.send_json(200, {"object": "list", "data": [{"id": model, "object": "model"}], "models": []})
        found = re.fullmatch(r"/v1/models/([^/]+)", path)
        if found:  # one model, as evoteam's built-in loop checks its key and model before a run (Anthropic's shape)
            self.record(kind="models", status=200, sent="whole", usage=norm_usage({}, "anthropic"))
            return self.send_json(200, {"type": "model", "id": found.group(1), "display_name": found.group(1),
                                        "created_at": "2026-01-01T00:00:00Z"})
        if path in ("/", "/api/hello", "/v1", "/health"):
            self.record(kind="probe", status=200, sent="whole", usage=norm_usage({}, "anthropic"))
            return self.send_json(200, {"ok": True})
        self.record(kind="unmatched", status=404, sent="whole", usage=norm_usage({}, "anthropic"), why="no such path")
        self.send_json(404, self.error_body("anthropic", 404, "scripted endpoint: no GET " + path))

    def do_POST(self):
        try:
            self.post()
        except (BrokenPipeError, ConnectionResetError):
            self.record(kind="client_gone", status=None, sent="cut", usage=norm_usage({}, "anthropic"))
        except Exception as error:  # a fault of the endpoint itself: said, recorded, never silent
            self.record(kind="endpoint_error", status=500, sent="whole", usage=norm_usage({}, "anthropic"),
                        why="%s: %s" % (type(error).__name__, error))
            try:
                self.send_json(500, self.error_body("anthropic", 500, "scripted endpoint failed: %s" % error))
            except OSError:
                pass

    def post(self):
        path = self.path.split("?")[0]
        protocol = "openai" if "/responses" in path or "/chat/completions" in path else "anthropic"
        body, problem = self.read_body()
        self.capture(body)
        if problem:
            return self.refuse(protocol, problem)
        if path.endswith("/v1/messages/count_tokens"):
            tokens = max(1, len(json.dumps(body)) // 4)
            self.record(kind="count_tokens", status=200, sent="whole", usage=norm_usage({}, protocol),
                        counted=tokens)
            return self.send_json(200, {"input_tokens": tokens})
        if path.endswith("/v1/messages"):
            return self.messages(body)
        if path.endswith("/v1/responses"):
            return self.openai_responses(body)
        self.refuse(protocol, "no POST " + path)

    # --- what the model says next -----------------------------------------------------------------------------

    def plan(self, protocol, body):
        """(kind, conversation name, step index, step) for this request; step None means the final text."""
        story = self.server.story
        tools = body.get("tools") or []
        conversation = Conversation(protocol, body)
        if not tools:
            return "side", None, None, {"text": story.side.get("text", "OK"), "usage": story.side.get("usage")}, None
        index, chosen = story.conversation_for(conversation.user_text)
        if chosen is None:
            return "unmatched", None, None, None, "no conversation of the story matches the prompt"
        name = chosen.get("name", str(index))
        step_index = conversation.next_step()
        if conversation.missing_results() > 0:
            return "unmatched", name, step_index, None, (
                "step %d waits for %d more tool results" % (step_index, conversation.missing_results()))
        steps = chosen.get("steps", [])
        if step_index >= len(steps):
            return "main", name, step_index, dict(story.final, beyond_story=True), None
        step = self.placed(steps[step_index], body)
        need = step.get("wait_tool_results")
        if need is not None and sum(conversation.results.values()) < need:
            return "unmatched", name, step_index, None, (
                "step %d waits for %d tool results, the request has %d" % (
                    step_index, need, sum(conversation.results.values())))
        return "main", name, step_index, step, None

    def placed(self, step, body):
        """The step with {cwd} (the CLI's working directory, as its request states it), {home} and {pwd} (this
        endpoint's HOME and working directory) filled in."""
        raw = json.dumps(body)
        found = re.search(r"Primary working directory: ([^\\\s\"]+)", raw) or re.search(r"<cwd>([^<]+)</cwd>", raw)
        values = {"{cwd}": found.group(1) if found else "", "{home}": os.environ.get("HOME", ""), "{pwd}": os.getcwd()}

        def fill(value):
            if isinstance(value, str):
                for key, text in values.items():
                    value = value.replace(key, text)
                return value
            if isinstance(value, list):
                return [fill(v) for v in value]
            if isinstance(value, dict):
                return {k: fill(v) for k, v in value.items()}
            return value
        return fill(step)

    def step_usage(self, step, kind):
        usage = dict(self.server.story.usage)
        usage.update(step.get("usage") or {})
        return usage

    def fault(self, protocol, step, entry):
        fault = step.get("fault")
        if fault == "hang":
            self.record(sent="hang", status=None, usage=norm_usage({}, protocol), **entry)
            self.hang()
            return True
        if fault == "status":
            status = int(step.get("status", 401))
            message = step.get("message", {401: "invalid x-api-key"}.get(status, "scripted failure"))
            self.record(sent="whole", status=status, usage=norm_usage({}, protocol), **entry)
            headers = {"retry-after": "0"} if status in (429, 529, 503) else {}
            self.send_json(status, self.error_body(protocol, status, message), headers)
            return True
        if fault == "malformed":
            self.record(sent="malformed", status=200, usage=norm_usage({}, protocol), **entry)
            self.start_sse()
            first = "message_start" if protocol == "anthropic" else "response.created"
            self.wfile.write(("event: %s\ndata: {\"type\": \"%s\", \"mess\n\n" % (first, first)).encode())
            self.wfile.write(b"data: \x00\x01 not json at all }}}\n\nevent: ???\ndata: [\n\n")
            self.cut_connection()
            return True
        if fault == "drop":  # the connection closed before any byte of a reply
            self.record(sent="none", status=None, usage=norm_usage({}, protocol), **entry)
            self.cut_connection()
            return True
        return False

    # Anthropic Messages ------------------------------------------------------------------------------------------

    def messages(self, body):
        kind, name, index, step, why = self.plan("anthropic", body)
        if kind == "unmatched":
            return self.refuse("anthropic", why)
        model = body.get("model") or self.server.story.model or "scripted-model"
        entry = {"kind": kind, "conversation": name, "step": index, "model": model,
                 "stream": bool(body.get("stream"))}
        if step.get("beyond_story"):
            entry["beyond_story"] = True
        if kind == "main" and self.fault("anthropic", step, entry):
            return
        usage = self.step_usage(step, kind) if kind == "main" else dict(step.get("usage") or {})
        blocks = []
        if step.get("text"):
            blocks.append({"type": "text", "text": step["text"]})
        for i, call in enumerate(step.get("tool_calls", [])):
            blocks.append({"type": "tool_use", "id": "toolu_%s_s%d_%d" % (EVO, index, i), "name": call["name"],
                           "input": call.get("input", {})})
        if not blocks:
            blocks.append({"type": "text", "text": "OK"})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message_id = "msg_evo_%d_%s" % (self.server.ledger.seq + 1, index if index is not None else "side")
        if not body.get("stream"):
            entry.update(status=200, sent="whole", usage=norm_usage(usage, "anthropic"))
            self.record(**entry)
            return self.send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                        "content": blocks, "stop_reason": stop, "stop_sequence": None,
                                        "usage": dict(usage)})
        start_usage = {k: v for k, v in usage.items() if k != "output_tokens"}
        start_usage["output_tokens"] = 1 if usage.get("output_tokens", 0) > 0 else 0
        cut = step.get("fault") == "cut"
        self.start_sse()
        self.sse("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                self.sse("content_block_start", {"type": "content_block_start", "index": i,
                                                 "content_block": {"type": "text", "text": ""}})
                text = block["text"]
                pieces = [text[:len(text) // 2], text[len(text) // 2:]] if len(text) > 1 else [text]
                for j, piece in enumerate(pieces):
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "text_delta", "text": piece}})
                    if cut and j == 0:
                        return self.cut_after(entry, start_usage)
            else:
                self.sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
                arguments = json.dumps(block["input"])
                for j, piece in enumerate([arguments[:len(arguments) // 2], arguments[len(arguments) // 2:]]):
                    self.sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                     "delta": {"type": "input_json_delta", "partial_json": piece}})
                    if cut and j == 0:
                        return self.cut_after(entry, start_usage)
            self.sse("content_block_stop", {"type": "content_block_stop", "index": i})
        self.sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": usage.get("output_tokens", 0)}})
        self.sse("message_stop", {"type": "message_stop"})
        entry.update(status=200, sent="whole", usage=norm_usage(usage, "anthropic"))
        self.record(**entry)

    def cut_after(self, entry, start_usage):
        # What went out before the cut: message_start's usage (its input counts and the first output token).
        entry.update(status=200, sent="cut", usage=norm_usage(start_usage, "anthropic"))
        self.record(**entry)
        self.cut_connection()

    # OpenAI Responses ------------------------------------------------------------------------------------------

    def openai_responses(self, body):
        kind, name, index, step, why = self.plan("openai", body)
        if kind == "unmatched":
            return self.refuse("openai", why)
        model = body.get("model") or self.server.story.model or "scripted-model"
        entry = {"kind": kind, "conversation": name, "step": index, "model": model,
                 "stream": bool(body.get("stream"))}
        if step.get("beyond_story"):
            entry["beyond_story"] = True
        if kind == "main" and self.fault("openai", step, entry):
            return
        usage = self.step_usage(step, kind) if kind == "main" else dict(step.get("usage") or {})
        cached = int(usage.get("cache_read_input_tokens", 0))
        wire_usage = {"input_tokens": int(usage.get("input_tokens", 0)) + cached,
                      "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": int(usage.get("output_tokens", 0)),
                      "output_tokens_details": {"reasoning_tokens": 0}}
        wire_usage["total_tokens"] = wire_usage["input_tokens"] + wire_usage["output_tokens"]
        response_id = "resp_evo_%d" % (self.server.ledger.seq + 1)
        items = []
        if step.get("text"):
            items.append({"type": "message", "id": "msg_evo_%d" % (self.server.ledger.seq + 1), "role": "assistant",
                          "status": "completed",
                          "content": [{"type": "output_text", "text": step["text"], "annotations": []}]})
        for i, call in enumerate(step.get("tool_calls", [])):
            call_id = "call_%s_s%d_%d" % (EVO, index, i)
            if "patch" in call:  # a freeform custom tool (apply_patch) takes its input as text
                items.append({"type": "custom_tool_call", "id": "ctc_" + call_id, "call_id": call_id,
                              "name": call["name"], "input": call["patch"], "status": "completed"})
            else:
                item = {"type": "function_call", "id": "fc_" + call_id, "call_id": call_id, "name": call["name"],
                        "arguments": json.dumps(call.get("input", {})), "status": "completed"}
                if call.get("namespace"):  # Codex offers MCP tools in a namespace: mcp__<server>
                    item["namespace"] = call["namespace"]
                items.append(item)
        if not items:
            items.append({"type": "message", "id": "msg_evo_side", "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": "OK", "annotations": []}]})
        if not body.get("stream", False):
            entry.update(status=200, sent="whole", usage=norm_usage(usage, "openai"))
            self.record(**entry)
            return self.send_json(200, {"id": response_id, "object": "response", "status": "completed",
                                        "model": model, "output": items, "usage": wire_usage})
        cut = step.get("fault") == "cut"
        self.start_sse()
        base = {"id": response_id, "object": "response", "model": model, "status": "in_progress", "output": []}
        self.sse("response.created", {"type": "response.created", "response": base})
        self.sse("response.in_progress", {"type": "response.in_progress", "response": base})
        for i, item in enumerate(items):
            self.sse("response.output_item.added", {"type": "response.output_item.added", "output_index": i,
                                                    "item": dict(item, status="in_progress")})
            if item["type"] == "message":
                text = item["content"][0]["text"]
                self.sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                        "output_index": i, "content_index": 0,
                                                        "delta": text[:len(text) // 2]})
                if cut:
                    return self.cut_after_openai(entry)
                self.sse("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                        "output_index": i, "content_index": 0,
                                                        "delta": text[len(text) // 2:]})
            elif cut:
                return self.cut_after_openai(entry)
            self.sse("response.output_item.done", {"type": "response.output_item.done", "output_index": i,
                                                   "item": item})
        self.sse("response.completed", {"type": "response.completed", "response": dict(
            base, status="completed", output=items, usage=wire_usage)})
        entry.update(status=200, sent="whole", usage=norm_usage(usage, "openai"))
        self.record(**entry)

    def cut_after_openai(self, entry):
        # The Responses API reports usage only in response.completed: nothing was reported before the cut.
        entry.update(status=200, sent="cut", usage=norm_usage({}, "openai"))
        self.record(**entry)
        self.cut_connection()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--story", required=True)
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--requests-dir", help="also keep every request's headers and body here, one file each")
    parser.add_argument("command", nargs="*", help="run after the server listens (after --)")
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "::1", "localhost"):
        parser.error("the endpoint serves loopback only")

    server = Server((args.host, args.port), Handler)
    server.story = Story(args.story)
    server.ledger = Ledger(args.ledger)
    server.stopping = threading.Event()
    server.requests_dir = args.requests_dir
    if args.requests_dir:
        os.makedirs(args.requests_dir, exist_ok=True)
    port = server.server_address[1]
    url = "http://127.0.0.1:%d" % port
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, args.port_file)
    print("scripted endpoint listening on %s" % url, file=sys.stderr, flush=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop(*_):
        server.stopping.set()
        server.shutdown()

    if not args.command:
        signal.signal(signal.SIGTERM, lambda *_: stop())
        try:
            while thread.is_alive():
                thread.join(0.5)
        except KeyboardInterrupt:
            stop()
        return 0
    words = [word.replace("{endpoint}", url) for word in args.command]
    env = dict(os.environ, ENDPOINT_URL=url)
    child = subprocess.Popen(words, env=env)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    code = child.wait()
    stop()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
