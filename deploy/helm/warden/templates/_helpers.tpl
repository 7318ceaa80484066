{{/*
warden.name is the chart's name, or nameOverride.
*/}}
{{- define "warden.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
warden.fullname names the release's objects: fullnameOverride, else the release's name
when it already contains the chart's (release "warden" gives the kustomize base's names),
else release-chart.
*/}}
{{- define "warden.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
warden.selectorLabels select the release's pods: the kustomize base's two labels and
the release, so that two releases in one namespace never select each other's pods.
*/}}
{{- define "warden.selectorLabels" -}}
app.kubernetes.io/name: {{ include "warden.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end }}

{{/*
warden.labels are every object's labels.
*/}}
{{- define "warden.labels" -}}
{{ include "warden.selectorLabels" . }}
app.kubernetes.io/part-of: warden
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
warden.sqlite is true (non-empty) in mode sqlite; the mode is checked here, once.
*/}}
{{- define "warden.sqlite" -}}
{{- if not (has .Values.mode (list "postgres" "sqlite")) }}
{{- fail (printf "mode %q: want postgres (replicas sharing PostgreSQL) or sqlite (one replica with a volume)" .Values.mode) }}
{{- end }}
{{- if eq .Values.mode "sqlite" }}true{{ end }}
{{- end }}

{{/*
warden.db is warden.yaml's db: the PostgreSQL URL, or the SQLite file on the volume.
*/}}
{{- define "warden.db" -}}
{{- if include "warden.sqlite" . }}
{{- printf "%s/warden.db" (trimSuffix "/" .Values.sqlite.mountPath) }}
{{- else }}
{{- $url := required "postgres.url: the PostgreSQL URL warden's replicas share (mode postgres)" .Values.postgres.url }}
{{- if or (regexMatch "^postgres(ql)?://[^/@]*:[^/@]*@" $url) (regexMatch "[?&]password=" $url) }}
{{- fail "postgres.url holds a password: warden refuses one in db:, and the Secret's postgres-password key gives it ($PGPASSWORD)" }}
{{- end }}
{{- $url }}
{{- end }}
{{- end }}

{{/*
warden.postgresPort is postgres.url's port, 5432 when it names none.
*/}}
{{- define "warden.postgresPort" -}}
{{- $host := (urlParse .Values.postgres.url).host }}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $host) }}
{{- default "5432" $port }}
{{- end }}

{{/*
warden.image is the image reference: repository@digest, or repository:tag (appVersion
when the tag is empty).
*/}}
{{- define "warden.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
warden.secretEnv is one variable taken from a key of the existing Secret.
*/}}
{{- define "warden.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ .secret }}
      key: {{ .key }}
{{- end }}
