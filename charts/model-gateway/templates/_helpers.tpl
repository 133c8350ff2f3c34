{{/* Names, labels and derived settings shared by every template. */}}

{{- define "model-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "model-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "model-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "model-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "model-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "model-gateway.labels" -}}
helm.sh/chart: {{ include "model-gateway.chart" . }}
{{ include "model-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: model-gateway
{{- end -}}

{{- define "model-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "model-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "model-gateway.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* Watched namespaces as a JSON list: the release namespace when none are given. */}}
{{- define "model-gateway.watchNamespaces" -}}
{{- $ns := .Values.gateway.watchNamespaces | default (list .Release.Namespace) -}}
{{- toJson (uniq $ns) -}}
{{- end -}}

{{/* "true" only when every namespace is watched (["*"]): the one case that needs a ClusterRole. */}}
{{- define "model-gateway.watchAllNamespaces" -}}
{{- if has "*" .Values.gateway.watchNamespaces -}}true{{- end -}}
{{- end -}}

{{/*
"true" when the API server takes the native preStop sleep action: beta and on by default from Kubernetes 1.30 (an
older server rejects the field). "-0" lets pre-release-style versions such as v1.30.2-eks-1234 match. `helm template`
without a cluster assumes its own client version: pass --kube-version (Argo CD and Flux pass the cluster's).
*/}}
{{- define "model-gateway.nativePreStopSleep" -}}
{{- if semverCompare ">=1.30.0-0" .Capabilities.KubeVersion.Version -}}true{{- end -}}
{{- end -}}

{{- define "model-gateway.leaseName" -}}
{{- .Values.gateway.leaderElection.leaseName | default (include "model-gateway.fullname" .) -}}
{{- end -}}

{{- define "model-gateway.idKeysSecretName" -}}
{{- .Values.idKeys.existingSecret | default (printf "%s-id-keys" (include "model-gateway.fullname" .)) -}}
{{- end -}}

{{- define "model-gateway.idKeysSecretKey" -}}
{{- if .Values.idKeys.existingSecret -}}{{ .Values.idKeys.existingSecretKey }}{{- else -}}keys{{- end -}}
{{- end -}}

{{- define "model-gateway.redisSecretName" -}}
{{- .Values.redis.existingSecret | default (printf "%s-redis" (include "model-gateway.fullname" .)) -}}
{{- end -}}

{{- define "model-gateway.redisSecretKey" -}}
{{- if .Values.redis.existingSecret -}}{{ .Values.redis.existingSecretKey }}{{- else -}}url{{- end -}}
{{- end -}}

{{- define "model-gateway.responsesRedisSecretName" -}}
{{- .Values.responsesRedis.existingSecret | default (printf "%s-responses-redis" (include "model-gateway.fullname" .)) -}}
{{- end -}}

{{- define "model-gateway.responsesRedisSecretKey" -}}
{{- if .Values.responsesRedis.existingSecret -}}{{ .Values.responsesRedis.existingSecretKey }}{{- else -}}url{{- end -}}
{{- end -}}

{{/* The rules in files/rbac-rules.yaml (one place, read by the chart tests too). */}}
{{- define "model-gateway.rbacRules" -}}
{{- .Files.Get "files/rbac-rules.yaml" -}}
{{- end -}}

{{/* The in-chart Redis's Deployment and Service: the full name cut to leave room for "-redis" in a Service name's 63. */}}
{{- define "model-gateway.redisFullname" -}}
{{- printf "%s-redis" (include "model-gateway.fullname" . | trunc 57 | trimSuffix "-") -}}
{{- end -}}

{{/* The in-chart Redis's pods: a name of their own, so the gateway's Service, PDB and spread never select them. */}}
{{- define "model-gateway.redisSelectorLabels" -}}
app.kubernetes.io/name: {{ include "model-gateway.name" . | trunc 57 | trimSuffix "-" }}-redis
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "model-gateway.redisLabels" -}}
helm.sh/chart: {{ include "model-gateway.chart" . }}
{{ include "model-gateway.redisSelectorLabels" . }}
app.kubernetes.io/component: redis
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: model-gateway
{{- end -}}

{{/*
OTEL_RESOURCE_ATTRIBUTES from a map: key=value pairs, comma-separated, in key order. ',' '=' and '%' are
percent-encoded, as the variable's format requires: the SDK drops every attribute when one pair does not parse.
*/}}
{{- define "model-gateway.resourceAttributes" -}}
{{- $pairs := list -}}
{{- range $k, $v := . -}}
{{- $encode := list (list "%" "%25") (list "," "%2C") (list "=" "%3D") -}}
{{- $key := $k -}}
{{- $value := toString $v -}}
{{- range $encode -}}
{{- $key = replace (index . 0) (index . 1) $key -}}
{{- $value = replace (index . 0) (index . 1) $value -}}
{{- end -}}
{{- $pairs = append $pairs (printf "%s=%s" $key $value) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}
