"""The MCP server: fluxdrive's review API as tools for coding assistants (``fluxdrive mcp``)."""
