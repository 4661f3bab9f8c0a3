"""What benches/mcp-list.sh and benches/mcp-create.sh share: a client of
`git treebox mcp` over its stdio (JSON-RPC, one line each way), a timer, and the
report of medians as ratios to a base."""
import json
import statistics
import subprocess
import time


class Server:
    """`git-treebox mcp` started and initialised; `call` is one tools/call."""

    def __init__(self, tb):
        self.p = subprocess.Popen([tb, "mcp"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params})
        return json.loads(self.p.stdout.readline())["result"]

    def call(self, tool, arguments):
        """The tool's structured document; a refusal fails the bench."""
        r = self.request("tools/call", {"name": tool, "arguments": arguments})
        assert not r.get("isError"), r
        return r["structuredContent"]

    def close(self):
        self.p.stdin.close()
        assert self.p.wait() == 0


def timed(f):
    """How long `f()` took, in ms."""
    s = time.perf_counter()
    f()
    return (time.perf_counter() - s) * 1000


def report(head, times, base):
    """Each series' median and its ratio to `base`'s, under `head`."""
    b = statistics.median(times[base])
    print(head)
    width = max(len(k) for k in times)
    for k, v in times.items():
        m = statistics.median(v)
        print(f"  {k:<{width}} {m:8.1f} ms   {m / b:5.2f}x {base}")
