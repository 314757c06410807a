import type { Infer } from 'superstruct'
import type { OperationName, operations } from './operations/table.ts'

/**
 * Request and answer types of every operation, for TypeScript hosts and clients: derived from the
 * superstruct structs of the operation table, so they cannot drift from what the gateway checks.
 */

/**
 * A value as a client may send it: flags also as `"true"`/`"1"` (`"false"`/`"0"`), lists also as
 * text (JSON, or for `usuarios` phones separated by `-`).
 */
export type Wire<T> = 0 extends 1 & T
  ? T
  : T extends boolean
    ? WireFlag<T>
    : T extends readonly (infer Item)[]
      ? Wire<Item>[] | string
      : T extends object
        ? { [K in keyof T]: Wire<T[K]> }
        : T

/** A flag as a client may send it. */
export type WireFlag<T extends boolean> = T extends true ? true | 'true' | '1' : false | 'false' | '0'

/** The body of a request of operation `N` (e.g. `OperationRequest<'sendText'>`). */
export type OperationRequest<N extends OperationName> = Wire<Infer<(typeof operations)[N]['schema']>>

/** The success answer of operation `N`: `{status: 200, message, ...}`. */
export type OperationAnswer<N extends OperationName> = Infer<(typeof operations)[N]['answer']>

/** Any error answer: `{status, message}` (`valid: false` too for OTP verification). */
export interface ErrorAnswerBody {
  status: number
  message: string
  valid?: false
}

export type { OperationName }

/** Operation 1. */
export type RegisterUserRequest = OperationRequest<'registerUser'>
/** Operation 1's answer (`data.authkey`). */
export type RegisterUserAnswer = OperationAnswer<'registerUser'>
/** Operation 2. */
export type CreateAgentRequest = OperationRequest<'createAgent'>
/** Operation 2's answer (`agent_id`). */
export type CreateAgentAnswer = OperationAnswer<'createAgent'>
/** Operation 3. */
export type GenerateQrCodeRequest = OperationRequest<'generateQrCode'>
/** Operation 3's answer (`qrcode` and `link`, or `code`). */
export type GenerateQrCodeAnswer = OperationAnswer<'generateQrCode'>
/** Operation 4. */
export type AddDeviceRequest = OperationRequest<'addDevice'>
/** Operation 4's answer. */
export type AddDeviceAnswer = OperationAnswer<'addDevice'>
/** Operation 5. */
export type DeviceStatusRequest = OperationRequest<'deviceStatus'>
/** Operation 5's answer (`dispositivo`). */
export type DeviceStatusAnswer = OperationAnswer<'deviceStatus'>
/** Operation 6. */
export type DeleteDeviceRequest = OperationRequest<'deleteDevice'>
/** Operation 6's answer. */
export type DeleteDeviceAnswer = OperationAnswer<'deleteDevice'>
/** Operation 7. */
export type DeleteShareLinkRequest = OperationRequest<'deleteShareLink'>
/** Operation 7's answer. */
export type DeleteShareLinkAnswer = OperationAnswer<'deleteShareLink'>
/** Operation 8. */
export type SendTextRequest = OperationRequest<'sendText'>
/** Operation 8's answer (`id`). */
export type SendTextAnswer = OperationAnswer<'sendText'>
/** Operation 9. */
export type SendMediaRequest = OperationRequest<'sendMedia'>
/** Operation 9's answer. */
export type SendMediaAnswer = OperationAnswer<'sendMedia'>
/** Operation 10. */
export type SendContactRequest = OperationRequest<'sendContact'>
/** Operation 10's answer. */
export type SendContactAnswer = OperationAnswer<'sendContact'>
/** Operation 11. */
export type SendLocationRequest = OperationRequest<'sendLocation'>
/** Operation 11's answer. */
export type SendLocationAnswer = OperationAnswer<'sendLocation'>
/** Operation 12. */
export type ReactToMessageRequest = OperationRequest<'reactToMessage'>
/** Operation 12's answer. */
export type ReactToMessageAnswer = OperationAnswer<'reactToMessage'>
/** Operation 13. */
export type DeleteMessageRequest = OperationRequest<'deleteMessage'>
/** Operation 13's answer. */
export type DeleteMessageAnswer = OperationAnswer<'deleteMessage'>
/** Operation 14. */
export type MarkMessageReadRequest = OperationRequest<'markMessageRead'>
/** Operation 14's answer. */
export type MarkMessageReadAnswer = OperationAnswer<'markMessageRead'>
/** Operation 15. */
export type SendButtonsRequest = OperationRequest<'sendButtons'>
/** Operation 15's answer. */
export type SendButtonsAnswer = OperationAnswer<'sendButtons'>
/** Operation 16. */
export type SendCarouselRequest = OperationRequest<'sendCarousel'>
/** Operation 16's answer. */
export type SendCarouselAnswer = OperationAnswer<'sendCarousel'>
/** Operation 17. */
export type ListSchedulesRequest = OperationRequest<'listSchedules'>
/** Operation 17's answer (`data`). */
export type ListSchedulesAnswer = OperationAnswer<'listSchedules'>
/** Sending an OTP code (`enviarOTP`). */
export type SendOtpRequest = OperationRequest<'sendOtp'>
/** The answer of sending an OTP code. */
export type SendOtpAnswer = OperationAnswer<'sendOtp'>
/** Operation 18. */
export type VerifyOtpRequest = OperationRequest<'verifyOtp'>
/** Operation 18's answer (`valid: true`). */
export type VerifyOtpAnswer = OperationAnswer<'verifyOtp'>
/** Operation 19. */
export type DeleteFlowConversationsRequest = OperationRequest<'deleteFlowConversations'>
/** Operation 19's answer (`excluidas`). */
export type DeleteFlowConversationsAnswer = OperationAnswer<'deleteFlowConversations'>
/** Operation 20. */
export type SwitchWebhookRequest = OperationRequest<'switchWebhook'>
/** Operation 20's answer (`webhook`). */
export type SwitchWebhookAnswer = OperationAnswer<'switchWebhook'>
/** Operation 21. */
export type GroupInfoRequest = OperationRequest<'groupInfo'>
/** Operation 21's answer (`grupo`). */
export type GroupInfoAnswer = OperationAnswer<'groupInfo'>
/** Operation 22. */
export type CreateGroupRequest = OperationRequest<'createGroup'>
/** Operation 22's answer (`grupoId`). */
export type CreateGroupAnswer = OperationAnswer<'createGroup'>
/** Operation 23. */
export type JoinGroupRequest = OperationRequest<'joinGroup'>
/** Operation 23's answer (`grupoId`). */
export type JoinGroupAnswer = OperationAnswer<'joinGroup'>
