/** One signed HTTP delivery of a webhook event, ready to be POSTed as is. */
export interface WebhookDelivery {
  /** Receiver URL (already checked against the URL policy when it was configured). */
  url: string
  /** Headers to send: `content-type: application/json` and the Standard Webhooks `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  headers: Record<string, string>
  /** The exact JSON body that was signed. */
  body: string
  /** The device whose event this is: senders may share their capacity fairly between devices with it. */
  deviceId?: string
  /** Aborted when the gateway stops and an attempt is still in flight 1 s past its deadline (a stop lets attempts finish first); shared by every attempt; senders should honour it. */
  signal?: AbortSignal
  /**
   * Aborted as the gateway begins to stop: a sender that has not begun this POST yet (it waits in
   * the sender's own queue) must not begin it, and throws (any error: one thrown once this is aborted is
   * not counted as an attempt); the event is sent after the restart. A POST
   * under way goes on (until `signal`): one begun during the stop could be cut and sent twice.
   */
  closing?: AbortSignal
  /**
   * When the attempt must have settled (ms since the epoch: now + `webhookTimeoutMs`), time spent
   * waiting in the sender's own queue included. The gateway gives up on a sender 1 s past it and
   * retries later, so a POST a sender still makes after its deadline may arrive twice.
   */
  deadline?: number
  /**
   * Whether the POST may begin now: false once this process may no longer hold the event (its
   * heartbeat was late since, or at, the attempt's claim, so another process may have taken the event
   * over and delivered it: a cluster instance, or outside cluster mode one started on the store once
   * this one's heartbeat lapsed). A sender calls it right before it begins the POST, after any wait
   * in its own queue, and when false does not begin it and throws; the event is attempted again (not
   * counted) by the process that holds it. The gateway always passes it; cheap (no store call).
   */
  mayBegin?: () => boolean
  /**
   * The headers signed now (`headers` again when signed this second; `headers` becomes them too): a
   * sender with a queue of its own POSTs these, got right before the POST begins, after the wait, so
   * that `webhook-timestamp` is of the POST (a standard verifier refuses one over 5 minutes old, and a
   * delivery may wait up to `webhookTimeoutMs` in a queue). The gateway always passes it; cheap.
   */
  freshHeaders?: () => Record<string, string>
}

/** What the receiver answered. A thrown error means no answer (network error, timeout, refused URL). */
export interface WebhookResponse {
  status: number
  /** The receiver's `Retry-After` header, when it sent one. */
  retryAfter?: string
}

/**
 * The webhook sender port: deliver one event to one URL. Retries, signing and durability live in the
 * core (the outbox); a sender only performs a single attempt.
 */
export interface WebhookSender {
  /** POST the delivery once and report the receiver's status. Throws when no status was obtained. */
  send(delivery: WebhookDelivery): Promise<WebhookResponse>
  /**
   * Whether this sender would POST to `url` (an http(s) URL without credentials) by its own URL
   * policy, e.g. an address policy that allows one internal receiver. When given, operations 3 and 4
   * take a webhook URL by it instead of the gateway's rule (public addresses only, unless
   * `allowPrivateUrls`, which takes any). The sender still checks what it connects to at send time.
   * A URL it throws on is refused as one it refuses, and the error logged; so is one it answers anything but a boolean for (a promise of an async policy included: the answer is needed at once).
   */
  accepts?(url: string): boolean
  /** Stop accepting work and wait for deliveries in flight. */
  close?(): Promise<void>
}
