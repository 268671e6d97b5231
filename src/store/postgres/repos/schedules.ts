// Scheduled switch-offs in PostgreSQL: the shared statements (src/store/statements/schedules.ts).
import type { ScheduleRepo } from '../../repos/schedules.js';
import { rowToSchedule, scheduleValues, type ScheduleRow } from '../../schedule-rows.js';
import { scheduleStatements as shared } from '../../statements/schedules.js';
import { sharedStatement, type Sql } from '../sql.js';

const get = sharedStatement<ScheduleRow>(shared.get);
const put = sharedStatement(shared.put);
const create = sharedStatement(shared.create);
const due = sharedStatement<{ integration_id: string }>(shared.due);
const recordMoment = sharedStatement(shared.recordMoment);
const expireMoments = sharedStatement(shared.expireMoments);

export function pgScheduleRepo(sql: Sql): ScheduleRepo {
  return {
    get: async (integrationId) => {
      const row = await get.one(sql, integrationId);
      return row ? rowToSchedule(row) : null;
    },
    put: async (schedule) => void (await put.run(sql, ...scheduleValues(schedule))),
    create: async (schedule) => (await create.run(sql, ...scheduleValues(schedule))).rowCount === 1,
    due: async (now, limit) => (await due.rows(sql, now, limit)).map((r) => r.integration_id),
    recordMoment: async (integrationId, kind, at, recordedAt) =>
      (await recordMoment.run(sql, integrationId, kind, at, recordedAt)).rowCount === 1,
    deleteMomentsBefore: async (before, limit) => (await expireMoments.run(sql, before, limit)).rowCount ?? 0,
  };
}
