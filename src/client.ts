/** zapgate/client: the request and answer types of every operation of the HTTP API, for typed clients (types only). */
export type * from './client-types.ts'
