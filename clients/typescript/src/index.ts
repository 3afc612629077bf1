// @bulwark/client: a zero-dependency TypeScript client for `bulwark serve`.
// The LangGraph store adapter is a separate entry point, "@bulwark/client/langgraph", so that
// importing the client never loads @langchain/langgraph-checkpoint.

export { BulwarkClient, AdminApi, QuarantineApi } from "./client.js";
export type { AddOptions, AuditOptions, ClientOptions, ListOptions, SearchOptions } from "./client.js";
export * from "./errors.js";
export type { Entry, Page, SearchResult } from "./types.js";
