import { FileSink, type OutTarget } from '../../output/sink.js';
import type { Reporter } from '../../stderr/reporter.js';
import { grouped } from '../../../core/words.js';
import { historyRecord, type HistorySeries, type Person, type SnapshotLists } from './history-series.js';

// `sgq history --html FILE`: one page that opens offline. uPlot's script and style
// (uplot-assets.ts) are loaded when a page is written, never by any other command, and inlined;
// a Content-Security-Policy lets the page fetch nothing at all. The numbers it draws are in a
// <script type="application/json" id="sgq-history"> element, the records `sgq history -o json`
// prints; who came and who left at each snapshot are plain HTML, newest first. Every text that
// came from the service (names, bios) is escaped for HTML, and every JSON block has its `<`
// escaped so that no value can close its script element.

/** Text for HTML: element content and quoted attribute values alike. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON for a <script> element: `<`, `>` and `&` as \u escapes (JSON.parse reads them back), so no value can end the element. */
export const jsonForScript = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A script to inline: one holding `</script` or `<!--` would end or confuse its element (uPlot's holds neither). */
function inlineScript(text: string): string {
  if (/<\/script|<!--/i.test(text)) throw new Error('a script to inline holds </script or <!--');
  return text;
}

/** The page, complete. */
export async function historyPage(series: readonly HistorySeries[], generatedAt: Date): Promise<string> {
  const { script, style } = await import('./uplot-assets.js');
  const records = series.flatMap((s) => s.records.map(historyRecord));
  const users = series.map((s) => s.user).join(', ');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sgq history">
<title>${escapeHtml(`sgq history: ${users}`)}</title>
<style>${style}</style>
<style>${PAGE_STYLE}</style>
</head>
<body>
<h1>${escapeHtml(`Followers over time: ${users}`)}</h1>
<p class="note">Written by sgq history at ${escapeHtml(generatedAt.toISOString())}. Counts are accounts in each snapshot; gained and lost are against the snapshot before it.</p>
${series.map((s, i) => seriesSection(s, i)).join('\n')}
<script type="application/json" id="sgq-history">${jsonForScript(records)}</script>
<script>${inlineScript(script)}</script>
<script>${inlineScript(DRAW_SCRIPT)}</script>
</body>
</html>
`;
}

function seriesSection(series: HistorySeries, index: number): string {
  const list = series.route.endsWith('following') ? 'following' : 'followers';
  const lists = [...(series.lists ?? [])].reverse();
  return `<section class="series" data-series="${index}" data-user="${escapeHtml(series.user)}" data-route="${escapeHtml(series.route)}">
<h2>${escapeHtml(`${series.user}: ${list}`)}</h2>
${series.records.length ? '' : '<p>No snapshot in the period.</p>'}
<div class="chart count" id="count-${index}"></div>
<div class="chart churn" id="churn-${index}"></div>
<h3>Who came and who left</h3>
${lists.length ? lists.map((l, i) => snapshotDetails(l, i < 3)).join('\n') : '<p>No snapshot in the period has one before it to compare with.</p>'}
</section>`;
}

function snapshotDetails(lists: SnapshotLists, open: boolean): string {
  const came = lists.gained.length + lists.gained_left_out;
  const left = lists.lost.length + lists.lost_left_out;
  const when = `${lists.taken_at.slice(0, 16).replace('T', ' ')} UTC`;
  return `<details${open ? ' open' : ''}><summary>${escapeHtml(when)}: <span class="gained">+${grouped(came)} came</span>, <span class="lost">−${grouped(left)} left</span></summary>
<div class="lists">${peopleTable('Came', lists.gained, lists.gained_left_out)}${peopleTable('Left', lists.lost, lists.lost_left_out)}</div>
</details>`;
}

function peopleTable(title: string, people: readonly Person[], leftOut: number): string {
  if (!people.length) return `<div><h4>${title}</h4><p>Nobody.</p></div>`;
  const rows = people.map((p) => {
    const name = p.username === null ? '' : `@${p.username}`;
    return `<tr><td class="name">${escapeHtml(p.name ?? '')}<br><span class="handle">${escapeHtml(name)}</span></td><td class="num">${p.followers === null ? '' : grouped(p.followers)}</td><td class="bio">${escapeHtml(p.bio ?? '')}</td></tr>`;
  });
  const more = leftOut ? `<p class="note">and ${grouped(leftOut)} more, not listed</p>` : '';
  return `<div><h4>${title} (${grouped(people.length + leftOut)})</h4><table><thead><tr><th>name</th><th>followers</th><th>bio</th></tr></thead><tbody>${rows.join('')}</tbody></table>${more}</div>`;
}

/** Writes the page through --out's machinery: FILE locked by the caller, a temporary file flushed and renamed into place. */
export async function writeHistoryPage(target: OutTarget, series: readonly HistorySeries[], reporter: Pick<Reporter, 'error'>, now: Date = new Date()): Promise<void> {
  const page = await historyPage(series, now);
  const sink = FileSink.open(target, () => undefined);
  sink.write(page);
  const note = await sink.finish(!sink.failure);
  if (sink.failure) throw sink.failure;
  if (note) reporter.error(note);
}

const PAGE_STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem auto;max-width:1100px;padding:0 1rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.2rem;margin-top:2rem}h3{font-size:1rem}
.note{color:#666;font-size:.9rem}
.chart{margin:.5rem 0}
details{border-top:1px solid #ddd;padding:.4rem 0}
summary{cursor:pointer}
.gained{color:#1a7f37}.lost{color:#cf222e}
.lists{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
@media (max-width:700px){.lists{grid-template-columns:1fr}}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;vertical-align:top;padding:.2rem .4rem;border-bottom:1px solid #eee}
td.num{text-align:right;white-space:nowrap}
td.bio{white-space:pre-wrap;overflow-wrap:anywhere}
.handle{color:#666}
`;

/** Draws each section's two charts from the JSON block: the count over time, and gains (up) and losses (down) per snapshot. */
const DRAW_SCRIPT = `
(function () {
  var records = JSON.parse(document.getElementById('sgq-history').textContent);
  var sections = document.querySelectorAll('section.series');
  for (var i = 0; i < sections.length; i++) draw(sections[i]);
  function draw(section) {
    var user = section.getAttribute('data-user'), route = section.getAttribute('data-route');
    var rows = records.filter(function (r) { return r.user === user && r.route === route; });
    if (!rows.length) return;
    var xs = rows.map(function (r) { return Date.parse(r.taken_at) / 1000; });
    var width = Math.max(320, section.clientWidth || 900);
    var n = section.getAttribute('data-series');
    new uPlot({
      title: 'Accounts in each snapshot', width: width, height: 260,
      series: [{}, { label: 'count', stroke: '#0969da', width: 2, fill: 'rgba(9,105,218,0.08)', points: { show: rows.length < 60 } }],
      axes: [{}, { size: 70 }]
    }, [xs, rows.map(function (r) { return r.count; })], document.getElementById('count-' + n));
    var bars = uPlot.paths.bars({ size: [0.6, 40] });
    new uPlot({
      title: 'Gained and lost at each snapshot', width: width, height: 220,
      series: [{}, { label: 'gained', stroke: '#1a7f37', fill: 'rgba(26,127,55,0.6)', paths: bars, points: { show: false } },
                   { label: 'lost', stroke: '#cf222e', fill: 'rgba(207,34,46,0.6)', paths: bars, points: { show: false },
                     value: function (u, v) { return v == null ? '-' : String(-v); } }],
      axes: [{}, { size: 70 }]
    }, [xs, rows.map(function (r) { return r.gained; }), rows.map(function (r) { return r.lost == null ? null : -r.lost; })], document.getElementById('churn-' + n));
  }
})();
`;
