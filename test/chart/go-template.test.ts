// The static template reader must itself catch what it claims to, or the chart lint above proves nothing.
import { describe, expect, it } from 'vitest';
import { blockProblems, definedTemplates, hasPath, includedTemplates, valuesPaths } from './go-template.js';

describe('go-template reader', () => {
  it('accepts balanced blocks and skips comments', () => {
    const src = '{{- /* {{ if }} in a comment */ -}}\n{{- if .Values.a }}\n{{ range .Values.b }}x{{ else }}y{{ end }}\n{{- end }}';
    expect(blockProblems(src)).toEqual([]);
  });

  it('reports a missing end, a stray end and a stray else with line numbers', () => {
    expect(blockProblems('{{ if .Values.a }}\nx')).toEqual(['line 1: "if .Values.a" is never closed']);
    expect(blockProblems('x\n{{ end }}')).toEqual(['line 2: {{ end }} without an open block']);
    expect(blockProblems('{{ define "x" }}{{ else }}{{ end }}')).toEqual(['line 1: stray else']);
  });

  it('finds defined and included template names', () => {
    const src = '{{- define "a.b" -}}x{{- end -}}{{ include "a.b" . }}{{ template "c" . }}';
    expect(definedTemplates(src)).toEqual(['a.b']);
    expect(includedTemplates(src)).toEqual(['a.b', 'c']);
  });

  it('finds .Values paths, also through $ and inside function calls', () => {
    const src = '{{ .Values.image.tag | default .Chart.AppVersion }}{{ toYaml $.Values.resources }}{{ (int .Values.gateway.port) }}';
    expect(valuesPaths(src)).toEqual(['gateway.port', 'image.tag', 'resources']);
  });

  it('checks paths against a values object', () => {
    const values = { a: { b: { c: 0 } }, list: [1] };
    expect(hasPath(values, 'a.b.c')).toBe(true);
    expect(hasPath(values, 'a.x')).toBe(false);
    expect(hasPath(values, 'list.0')).toBe(false);
  });
});
