import { array, enums, object, string, type } from '../schema/structs.ts'
import { answer, defineOperation, deviceByAppkey } from './operation.ts'
import { falseFlag, text, trueFlag } from '../schema/fields.ts'
import { deviceErrors } from './error-answers.ts'

/** How a listing words an item's state. */
const SITUACAO = { pending: 'pendente', failed: 'falhou' } as const

/** Operation 17: the device's scheduled messages, earliest first (`situacao: falhou` for a send that failed for good, kept 7 days). */
export const listSchedules = defineOperation({
  field: 'listaAgendamento',
  name: 'listSchedules',
  summary: 'List the scheduled messages of a device',
  answer: answer({ data: array(object({ id: string(), to: string(), message: string(), agendamento: string(), situacao: enums(['pendente', 'falhou']) })) }),
  errors: deviceErrors,
  schema: type({ appkey: text(), authkey: text(256), listaAgendamento: trueFlag(), message: falseFlag() }),
  device: deviceByAppkey(),
  async handle(_input, { services, device }) {
    const items = await services.messaging.scheduler.list(device)
    return {
      message: items.length > 0 ? 'Agendamentos encontrados.' : 'Nenhum agendamento encontrado.',
      data: items.map(({ id, to, summary, agendamento, state }) => ({ id, to, message: summary, agendamento, situacao: SITUACAO[state] })),
    }
  },
})
