{{/*
The scenario file the CronJob runs: the scenario value, else the shipped
first check.
*/}}
{{- define "rdmabench.scenarioYAML" -}}
{{- if .Values.scenario -}}
{{- .Values.scenario -}}
{{- else -}}
{{- .Files.Get "files/kube-check.yaml" -}}
{{- end -}}
{{- end -}}

{{/*
The scenario's metadata.name (it names the CronJob and its ConfigMap), checked
as plan -o cronjob checks it.
*/}}
{{- define "rdmabench.scenarioName" -}}
{{- $s := include "rdmabench.scenarioYAML" . | fromYaml -}}
{{- if hasKey $s "Error" -}}
{{- fail (printf "scenario: not YAML: %s" $s.Error) -}}
{{- end -}}
{{- $name := "" -}}
{{- with $s.metadata }}{{ $name = .name | default "" }}{{ end -}}
{{- if not $name -}}
{{- fail "scenario: no metadata.name (give the scenario with --set-file scenario=FILE)" -}}
{{- end -}}
{{- if ne (toString $s.backend) "kube" -}}
{{- fail (printf "scenario %s: the CronJob runs it in the cluster and needs backend: kube (this one is %v)" $name $s.backend) -}}
{{- end -}}
{{- if gt (len (printf "rdmabench-%s" $name)) 52 -}}
{{- fail (printf "CronJob name rdmabench-%s is longer than 52 characters (shorten metadata.name)" $name) -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/* The CronJob's and ConfigMap's name. */}}
{{- define "rdmabench.name" -}}
rdmabench-{{ include "rdmabench.scenarioName" . }}
{{- end -}}

{{/*
The labels plan -o cronjob gives every object (and the Job's pods).
*/}}
{{- define "rdmabench.selectorLabels" -}}
app.kubernetes.io/name: rdmabench
rdmabench.io/scenario: {{ include "rdmabench.scenarioName" . | quote }}
{{- end -}}

{{/* Those and Helm's own. */}}
{{- define "rdmabench.labels" -}}
{{ include "rdmabench.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{/* The CronJob's image. */}}
{{- define "rdmabench.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
Whether the OpenShift SCC and its grant are installed: openshift.scc true,
or auto on a cluster that serves security.openshift.io/v1.
*/}}
{{- define "rdmabench.openshift" -}}
{{- $v := .Values.openshift.scc -}}
{{- if or (eq (toString $v) "true") (and (eq (toString $v) "auto") (.Capabilities.APIVersions.Has "security.openshift.io/v1")) -}}
true
{{- end -}}
{{- end -}}
