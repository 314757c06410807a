import { createAgent, registerUser } from './accounts.ts'
import { addDevice, deleteDevice, deleteShareLink, deviceStatus, generateQrCode } from './devices.ts'
import { createGroup, groupInfo, joinGroup } from './groups.ts'
import { sendButtons, sendCarousel } from './interactive.ts'
import { deleteMessage, markMessageRead, reactToMessage } from './message-actions.ts'
import { sendContact, sendLocation, sendMedia, sendText } from './messages.ts'
import { sendOtp, verifyOtp } from './otp.ts'
import { listSchedules } from './schedules.ts'
import { deleteFlowConversations, switchWebhook } from './settings.ts'

/**
 * Every operation by its English name. The operation table (table.ts) says where each is served and
 * in which precedence; this map gives the client types their names (a test checks both list the same).
 */
export const operations = {
  registerUser,
  createAgent,
  generateQrCode,
  addDevice,
  deviceStatus,
  deleteDevice,
  deleteShareLink,
  sendText,
  sendMedia,
  sendContact,
  sendLocation,
  reactToMessage,
  deleteMessage,
  markMessageRead,
  sendButtons,
  sendCarousel,
  listSchedules,
  sendOtp,
  verifyOtp,
  deleteFlowConversations,
  switchWebhook,
  groupInfo,
  createGroup,
  joinGroup,
}

/** The English name of an operation (`sendText`, `addDevice`, ...). */
export type OperationName = keyof typeof operations
