import { structSchema } from '../schema/struct-schema.ts'
import { healthAnswer } from './health.ts'

/** Which optional service routes the gateway serves. */
export interface ServiceRouteFlags {
  /** `GET /metrics` is on. */
  metrics: boolean
  /** `GET /openapi.json` and `GET /docs` are on. */
  docs: boolean
}

/** The OpenAPI path items of the routes beside the operation table: QR share page, health, metrics, docs. */
export function serviceRouteDocs(flags: ServiceRouteFlags): Record<string, unknown> {
  const token = { name: 'token', in: 'path', required: true, schema: { type: 'string' }, description: 'The token of a `link` answered by operations 3 and 4.' }
  const revoked = { description: 'Unknown or revoked link (`GerenciarLinks: excluir`).' }
  return {
    '/qr/{token}': {
      get: {
        operationId: 'getSharePage',
        tags: ['service'],
        summary: "QR share page: shows the device's live QR until it connects, then says so",
        parameters: [token],
        responses: {
          '200': { description: 'An HTML page (polls its state every 2 s).', content: { 'text/html': { schema: { type: 'string' } } } },
          '404': revoked,
        },
      },
    },
    '/qr/{token}/state': {
      get: {
        operationId: 'getSharePageState',
        tags: ['service'],
        summary: 'The state the share page shows',
        parameters: [token],
        responses: {
          '200': {
            description: 'Connected (with the phone), or the current QR as a PNG data URI.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['conectado', 'telefone', 'qrcode'],
                  properties: { conectado: { type: 'boolean' }, telefone: { type: ['string', 'null'] }, qrcode: { type: ['string', 'null'] } },
                },
              },
            },
          },
          '404': revoked,
        },
      },
    },
    '/health': {
      get: {
        operationId: 'getHealth',
        tags: ['service'],
        summary: 'Whether the store and the messaging transport answer',
        responses: {
          '200': { description: 'Both answer.', content: { 'application/json': { schema: structSchema(healthAnswer) } } },
          '503': { description: 'The store or the transport does not answer.', content: { 'application/json': { schema: structSchema(healthAnswer) } } },
        },
      },
    },
    ...(flags.metrics
      ? {
          '/metrics': {
            get: {
              operationId: 'getMetrics',
              tags: ['service'],
              summary: 'Prometheus metrics (text exposition format)',
              responses: { '200': { description: 'Every zapgate_* metric.', content: { 'text/plain': { schema: { type: 'string' } } } } },
            },
          },
        }
      : {}),
    ...(flags.docs
      ? {
          '/openapi.json': {
            get: {
              operationId: 'getOpenApi',
              tags: ['service'],
              summary: 'This document',
              responses: {
                '200': { description: 'OpenAPI 3.1, generated from the operation table.', content: { 'application/json': { schema: { type: 'object' } } } },
              },
            },
          },
          '/docs': {
            get: {
              operationId: 'getDocs',
              tags: ['service'],
              summary: 'This document in Swagger UI (served from the package, no CDN)',
              responses: { '200': { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } } },
            },
          },
        }
      : {}),
  }
}
