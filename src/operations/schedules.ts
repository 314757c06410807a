import { array, enums, object, string, type } from 'superstruct'
import { answer, defineOperation, deviceByAppkey } from './operation.ts'
import { falseFlag, text, trueFlag } from '../schema/fields.ts'
import { deviceErrors } from './error-answers.ts'

/** Operation 17: the device's scheduled messages, earliest first (`situacao: falhou` for a send that failed every retry, kept 7 days). */
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
      data: items.map(item => ({
        id: item.id,
        to: item.to,
        message: item.summary,
        agendamento: item.agendamento,
        situacao: item.state === 'failed' ? ('falhou' as const) : ('pendente' as const),
      })),
    }
  },
})
