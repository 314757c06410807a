import { operationsOf, type PathEntry } from './operation.ts'
import { createAgent, registerUser } from './accounts.ts'
import { addDevice, deleteDevice, deleteShareLink, deviceStatus, generateQrCode } from './devices.ts'
import { deleteFlowConversations, switchWebhook } from './settings.ts'
import { createGroup, groupInfo, joinGroup } from './groups.ts'
import { sendButtons, sendCarousel } from './interactive.ts'
import { deleteMessage, markMessageRead, reactToMessage } from './message-actions.ts'
import { sendContact, sendLocation, sendMedia, sendText } from './messages.ts'
import { sendOtp, verifyOtp } from './otp.ts'
import { listSchedules } from './schedules.ts'

/** The map of the API: every path with its operations in precedence order (DESIGN.md, HTTP contract 2; see operationSelector). */
export const operationTable = [
  { path: '/api/auth', operations: [registerUser] },
  { path: '/api/v2/ia', operations: [], fallback: createAgent },
  { path: '/api/v2/qrcode', operations: [], fallback: generateQrCode },
  { path: '/api/developer', operations: [addDevice, deviceStatus, deleteDevice, deleteShareLink] },
  { path: '/api/settings', operations: [deleteFlowConversations, switchWebhook] },
  {
    path: '/api/create-message',
    operations: [
      listSchedules,
      verifyOtp,
      sendOtp,
      markMessageRead,
      deleteMessage,
      reactToMessage,
      sendCarousel,
      sendButtons,
      sendMedia,
      sendContact,
      sendLocation,
    ],
    fallback: sendText,
  },
  { path: '/api/groups', operations: [groupInfo, createGroup, joinGroup] },
] as const satisfies readonly PathEntry[]

/** Every operation of the table, by the name its definition gives. */
type TableOperation = {
  [I in keyof typeof operationTable]: (typeof operationTable)[I] extends { operations: readonly (infer O)[]; fallback?: infer F }
    ? O | Exclude<F, undefined>
    : never
}[number]

/** The English name of an operation (`sendText`, `addDevice`, ...). */
export type OperationName = TableOperation['name']

/** Every operation by its English name (the client types are named after them). */
export const operations = Object.fromEntries(operationTable.flatMap(operationsOf).map(operation => [operation.name, operation])) as {
  [N in OperationName]: Extract<TableOperation, { name: N }>
}
