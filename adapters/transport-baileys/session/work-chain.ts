/** Work run one item after another (a socket's incoming messages and delivery updates): `add` chains an item, `settled` waits until the chain stops growing. */
export class WorkChain {
  private tail: Promise<void> = Promise.resolve()

  /** Run `work` after everything added before it; its failure goes to `onError`, and the chain goes on. */
  add(work: () => unknown, onError: (err: unknown) => void): void {
    this.tail = this.tail.then(work).then(() => undefined, onError)
  }

  /** Resolves once every item added so far, and those added meanwhile, has run. */
  async settled(): Promise<void> {
    let tail: Promise<void>
    do {
      tail = this.tail
      await tail
    } while (tail !== this.tail)
  }
}
