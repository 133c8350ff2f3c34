import { describe, expect, it } from 'vitest';
import type { Condition, ObjectStatus } from '../compile/conditions.js';
import { renderJson, renderTable } from './check-render.js';
import { buildReport, type ReportInput } from './check-report.js';

const c = (type: Condition['type'], status: Condition['status'], reason: Condition['reason'], message: string = reason): Condition => ({
  type,
  status,
  reason,
  message,
});
const READY = [c('Accepted', 'True', 'Accepted'), c('ResolvedRefs', 'True', 'ResolvedRefs'), c('Ready', 'True', 'Ready', 'serving')];

function st(kind: string, name: string, conditions: Condition[], file: string, line: number, warnings: string[] = []): ObjectStatus {
  return { ref: `${kind}/default/${name}`, kind, namespace: 'default', name, generation: undefined, conditions, warnings, source: { file, line } };
}

const input = (statuses: ObjectStatus[], more: Partial<ReportInput> = {}): ReportInput => ({
  statuses,
  errors: [],
  files: ['b.yaml', 'a.yaml'],
  ignored: 0,
  allowWarnings: false,
  ...more,
});

describe('check report', () => {
  it('names the cause, not the Ready summary, and lists objects in input order', () => {
    const r = buildReport(
      input([
        st(
          'GatewayToken',
          'expired',
          [c('Accepted', 'True', 'Accepted'), c('ResolvedRefs', 'True', 'ResolvedRefs'), c('Ready', 'False', 'Expired', 'the token expired')],
          'a.yaml',
          9,
        ),
        st('ModelRoute', 'dup', [c('Accepted', 'False', 'Conflict', 'taken'), c('Ready', 'False', 'NotAccepted', 'taken')], 'a.yaml', 1),
        st(
          'GatewayToken',
          'orphan',
          [c('Accepted', 'True', 'Accepted'), c('ResolvedRefs', 'False', 'GroupNotFound', 'no group'), c('Ready', 'False', 'RefsNotResolved', 'no group')],
          'b.yaml',
          5,
        ),
        st('Group', 'g', READY, 'b.yaml', 1),
      ]),
    );
    expect(r.objects.map((o) => [o.name, o.ready, o.reason, o.message])).toEqual([
      ['g', true, 'Ready', 'serving'],
      ['orphan', false, 'GroupNotFound', 'no group'],
      ['dup', false, 'Conflict', 'taken'],
      ['expired', false, 'Expired', 'the token expired'],
    ]);
    expect(r).toMatchObject({ ok: false, summary: { objects: 4, ready: 1, notReady: 3, warnings: 0, errors: 0 } });
  });

  it('fails on warnings and input errors; allowWarnings relaxes only warnings', () => {
    const warned = [st('Group', 'g', READY, 'a.yaml', 1, ['model pattern "x-*" matches no served model'])];
    expect(buildReport(input(warned)).ok).toBe(false);
    expect(buildReport(input(warned, { allowWarnings: true })).ok).toBe(true);
    const broken = { errors: [{ file: 'c.yaml', line: 2, message: 'bad' }], allowWarnings: true };
    expect(buildReport(input([st('Group', 'g', READY, 'a.yaml', 1)], broken)).ok).toBe(false);
    expect(buildReport(input([])).ok).toBe(true);
  });

  it('renders an aligned table, compiler-style diagnostics and a summary', () => {
    const r = buildReport(
      input(
        [
          st('Group', 'g', READY, 'a.yaml', 1, ['model pattern "x-*" matches no served model']),
          st(
            'GatewayToken',
            'a-long-name',
            [c('Accepted', 'False', 'InvalidSpec', 'spec (line 4):\n  bad'), c('Ready', 'False', 'NotAccepted', 'bad')],
            'a.yaml',
            3,
          ),
        ],
        {
          errors: [
            { file: 'c.yaml', line: 2, message: 'Map keys must be unique' },
            { file: 'gone', line: null, message: 'no such file or directory' },
          ],
          ignored: 2,
        },
      ),
    );
    expect(renderTable(r)).toBe(
      [
        'KIND          NAME                 READY  REASON       MESSAGE             SOURCE',
        'Group         default/g            True   Ready        serving             a.yaml:1',
        'GatewayToken  default/a-long-name  False  InvalidSpec  spec (line 4): bad  a.yaml:3',
        '',
        'c.yaml:2: error: Map keys must be unique',
        'gone: error: no such file or directory',
        'a.yaml:1: warning: Group default/g: model pattern "x-*" matches no served model',
        '',
        'FAIL: 2 objects (1 ready, 1 not ready), 1 warning, 2 input errors; 2 objects of other kinds ignored',
        '',
      ].join('\n'),
    );
    expect(JSON.parse(renderJson(r))).toEqual(JSON.parse(JSON.stringify(r)));
  });

  it('shows a ready object\'s limits beside "serving", and nothing of them when it is not ready', () => {
    const refs = c('ResolvedRefs', 'True', 'ResolvedRefs', '3 model(s) allowed; limits: requestsPerMinute 600');
    const ready = st('Group', 'g', [c('Accepted', 'True', 'Accepted'), refs, c('Ready', 'True', 'Ready', 'serving')], 'a.yaml', 1);
    const off = st('GatewayToken', 't', [c('Accepted', 'True', 'Accepted'), refs, c('Ready', 'False', 'Disabled', 'the token is disabled')], 'a.yaml', 5);
    const r = buildReport(input([ready, off]));
    expect(r.objects.map((o) => o.message)).toEqual(['serving; limits: requestsPerMinute 600', 'the token is disabled']);
  });

  it('says so when there is nothing to check', () => {
    expect(renderTable(buildReport(input([])))).toBe(
      'No ModelRoute, Group or GatewayToken objects found.\n\nOK: 0 objects (0 ready, 0 not ready), 0 warnings, 0 input errors\n',
    );
  });
});
