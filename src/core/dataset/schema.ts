import { findRouteByPath } from '../routes.js';
import { QUERY_USER, recordColumns, type Declared } from '../../parquet/declared.js';
import type { Kind } from './layout.js';

// The declared columns of the dataset's files: sgq's own (who a record was fetched for, when)
// and the route's fields (src/core/record-fields.ts), the same in every file of a route and
// kind. The writer writes them (part.ts); `dataset info` and `compact` check files against
// them (conform.ts).

const FETCHED_AT: Declared = { name: 'fetched_at', kind: 'datetime', description: "the run's start (UTC), the same for every record of one run" };
const CHANGE: Declared = { name: 'change', kind: 'string', description: '`gained`, `lost` or `renamed`' };
const RENAMED_FROM: Declared = { name: 'renamed_from', kind: 'string', description: 'the older username of a renamed account (churn matched it by id)' };
const OBSERVED_AT: Declared = { name: 'observed_at', kind: 'datetime', description: "the run's start (UTC): when the change was seen" };

/**
 * Not declared (a text column, in the files of the runs that have it): the since the records
 * of a --full-every night between whole ones were asked with; such a run holds what came
 * since, not the whole list.
 */
export const FETCHED_SINCE = 'fetched_since';

/** The route of a partition (`graph.get_followers`), when sgq knows it. */
export const routeOfPartition = (route: string) => findRouteByPath(route.replaceAll('.', '/'));

/**
 * The columns every file of `kind` of a route has (before `_unfit`): sgq's own, then the
 * route's fields. A route sgq does not know declares only sgq's own.
 */
export function datasetSchema(route: string, kind: Kind): Declared[] {
  const known = routeOfPartition(route);
  const fields = known ? recordColumns(known.records) : [];
  return kind === 'records' ? [QUERY_USER, FETCHED_AT, ...fields] : [CHANGE, RENAMED_FROM, QUERY_USER, OBSERVED_AT, ...fields];
}
