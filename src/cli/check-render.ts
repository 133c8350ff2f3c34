// Renders a CheckReport: an aligned table plus compiler-style "file:line: error|warning: …" lines (which editors
// and CI log viewers link), or the report itself as JSON. Pure: returns strings.
import type { CheckReport } from './check-report.js';

export function renderJson(report: CheckReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

export function renderTable(report: CheckReport): string {
  const out: string[] = [];
  if (report.objects.length > 0) {
    const rows = [
      ['KIND', 'NAME', 'READY', 'REASON', 'MESSAGE', 'SOURCE'],
      ...report.objects.map((o) => [o.kind, `${o.namespace}/${o.name}`, o.ready ? 'True' : 'False', o.reason, oneLine(o.message), where(o.file, o.line)]),
    ];
    out.push(...alignColumns(rows));
  } else {
    out.push('No ModelRoute, Group or GatewayToken objects found.');
  }

  const diagnostics = [
    ...report.errors.map((e) => `${where(e.file, e.line)}: error: ${oneLine(e.message)}`),
    ...report.objects.flatMap((o) => o.warnings.map((w) => `${where(o.file, o.line)}: warning: ${o.kind} ${o.namespace}/${o.name}: ${oneLine(w)}`)),
  ];
  if (diagnostics.length > 0) out.push('', ...diagnostics);
  out.push('', summaryLine(report));
  return `${out.join('\n')}\n`;
}

function summaryLine(report: CheckReport): string {
  const s = report.summary;
  const parts = [`${s.objects} ${plural(s.objects, 'object')} (${s.ready} ready, ${s.notReady} not ready)`];
  parts.push(`${s.warnings} ${plural(s.warnings, 'warning')}${s.warnings > 0 && s.warningsAllowed ? ' (allowed)' : ''}`);
  parts.push(`${s.errors} input ${plural(s.errors, 'error')}`);
  let line = `${report.ok ? 'OK' : 'FAIL'}: ${parts.join(', ')}`;
  if (s.ignored > 0) line += `; ${s.ignored} ${plural(s.ignored, 'object')} of other kinds ignored`;
  const onlyWarnings = !report.ok && s.notReady === 0 && s.errors === 0;
  if (onlyWarnings) line += '. Warnings fail the check; --allow-warnings accepts them.';
  return line;
}

/** Pads every column but the last to its widest cell, two spaces apart, as kubectl does. */
function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

function where(file: string | null, line: number | null): string {
  if (file === null) return '-';
  return line === null ? file : `${file}:${line}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
