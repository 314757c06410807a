/**
 * zapgate/client: the request and answer types of every operation of the HTTP API, and a small
 * typed client that follows a cluster's holder hint (client-api.ts: global fetch, no gateway code).
 */
export type * from './client-types.ts'
export { createClient, HOLDER_HEADER, OPERATION_ROUTES, type ClientAnswer, type ClientOptions, type ClientRequest, type GatewayClient } from './client-api.ts'
