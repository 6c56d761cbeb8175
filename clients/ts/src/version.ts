/** The package's version: the llmrelay server version it was released with (docs/clients.md). */
export const VERSION = "0.1.0";
