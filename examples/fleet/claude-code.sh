#!/bin/sh
# Claude Code on a node: add the hub's endpoint as an MCP server over Streamable HTTP.
# MEMORY_BRIDGE_TOKEN holds the token `memory-bridge clients add` printed on the hub for this node.
claude mcp add --transport http --scope user memory https://hub.example.org:8765/mcp \
  --header "Authorization: Bearer ${MEMORY_BRIDGE_TOKEN:?set MEMORY_BRIDGE_TOKEN to this node's token}"
