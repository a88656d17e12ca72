// The official MCP TypeScript SDK as a user's client would use it: connect over streamable HTTP with the bearer
// token, list the tools and call all five. Prints one JSON object on stdout; on failure, the message the SDK
// gives its user, as {"error": "..."}, and exit code 2.  Usage: node client.mjs URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });

function structured(result) {
  if (result.isError) throw new Error(`tool error: ${result.content?.[0]?.text}`);
  return result.structuredContent;
}

try {
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name).sort();
  const written = structured(await client.callTool({
    name: "memory_write",
    arguments: { title: "Deploys", text: "Deploys go through Argo CD.", kind: "project", tags: ["C#", "infra"] },
  }));
  const uid = written.fact.uid;
  const found = structured(await client.callTool({ name: "memory_search", arguments: { query: "deploys argo" } }));
  const updated = structured(await client.callTool({
    name: "memory_update", arguments: { uid, text: "Deploys go through Flux." },
  }));
  const recent = structured(await client.callTool({ name: "memory_recent", arguments: { limit: 5 } }));
  const forgotten = structured(await client.callTool({
    name: "memory_forget", arguments: { uid: updated.fact.uid, reason: "moved to a new runbook" },
  }));
  const refused = await client.callTool({ name: "memory_search", arguments: { query: "x", limit: true } });
  console.log(JSON.stringify({
    server: client.getServerVersion(), tools, written, found, updated, recent, forgotten,
    refused: { isError: refused.isError, text: refused.content?.[0]?.text },
  }));
  await client.close();
} catch (error) {
  console.log(JSON.stringify({ error: String(error?.message ?? error) }));
  process.exit(2);
}
