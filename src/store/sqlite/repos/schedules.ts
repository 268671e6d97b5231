// Scheduled switch-offs in SQLite: the shared statements (src/store/statements/schedules.ts).
import type { ScheduleRepo } from '../../repos/schedules.js';
import { rowToSchedule, scheduleValues, type ScheduleRow } from '../../schedule-rows.js';
import { scheduleStatements as shared } from '../../statements/schedules.js';
import type { Db } from '../connection.js';
import { prepareShared } from '../shared.js';

export function sqliteScheduleRepo(db: Db): ScheduleRepo {
  const get = prepareShared<ScheduleRow>(db, shared.get);
  const put = prepareShared(db, shared.put);
  const create = prepareShared(db, shared.create);
  const due = prepareShared<{ integration_id: string }>(db, shared.due);
  const recordMoment = prepareShared(db, shared.recordMoment);
  const expireMoments = prepareShared(db, shared.expireMoments);
  return {
    get: async (integrationId) => {
      const row = get.get(integrationId);
      return row ? rowToSchedule(row) : null;
    },
    put: async (schedule) => void put.run(...scheduleValues(schedule)),
    create: async (schedule) => create.run(...scheduleValues(schedule)).changes === 1,
    due: async (now, limit) => due.all(now, limit).map((r) => r.integration_id),
    recordMoment: async (integrationId, kind, at, recordedAt) =>
      recordMoment.run(integrationId, kind, at, recordedAt).changes === 1,
    deleteMomentsBefore: async (before, limit) => expireMoments.run(before, limit).changes,
  };
}
