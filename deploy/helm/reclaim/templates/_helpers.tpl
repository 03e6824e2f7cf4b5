{{/* The release's full name: "reclaim" for a release named reclaim. */}}
{{- define "reclaim.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "reclaim.serviceAccountName" -}}
{{- default (include "reclaim.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- define "reclaim.priorityClassName" -}}
{{- if .Values.priorityClass.create -}}
{{- default (include "reclaim.fullname" .) .Values.priorityClass.name -}}
{{- else -}}
{{- .Values.priorityClass.name -}}
{{- end -}}
{{- end -}}

{{- define "reclaim.stateName" -}}
{{- printf "%s-state" (include "reclaim.fullname" .) -}}
{{- end -}}

{{- define "reclaim.labels" -}}
app.kubernetes.io/name: reclaim
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: reclaim
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "reclaim.selector" -}}
app.kubernetes.io/name: reclaim
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.mode }}
{{- end -}}

{{/* The config as written to the ConfigMap: values.config (agent mode:
values.agent.config) plus the names the RBAC grants. */}}
{{- define "reclaim.config" -}}
{{- $cfg := deepCopy (ternary .Values.agent.config .Values.config (eq .Values.mode "agent")) -}}
{{- if not (hasKey $cfg "state") -}}
{{- $_ := set $cfg "state" (dict "configMap" (dict "namespace" .Release.Namespace "name" (include "reclaim.stateName" .))) -}}
{{- end -}}
{{- if eq .Values.mode "daemon" -}}
{{- $d := default (dict) $cfg.daemon -}}
{{- $le := default (dict) $d.leaderElection -}}
{{- $_ := set $le "enabled" true -}}
{{- $_ := set $le "namespace" .Release.Namespace -}}
{{- $_ := set $le "name" (include "reclaim.fullname" .) -}}
{{- $_ := set $d "leaderElection" $le -}}
{{- $_ := set $cfg "daemon" $d -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}

{{/* The pod spec shared by the CronJob and the Deployment. */}}
{{- define "reclaim.podSpec" -}}
serviceAccountName: {{ include "reclaim.serviceAccountName" . }}
automountServiceAccountToken: true
{{- with include "reclaim.priorityClassName" . }}
priorityClassName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
containers:
  - name: reclaim
    image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
    imagePullPolicy: {{ .Values.image.pullPolicy }}
    args:
      {{- if include "reclaim.watchingAgent" . }}
      - daemon
      - --agent
      {{- else }}
      - {{ if eq .Values.mode "daemon" }}daemon{{ else if eq .Values.mode "agent" }}agent{{ else }}run{{ end }}
      {{- end }}
      - --config
      - /etc/reclaim/reclaim.yaml
      - --log-json
      {{- if .Values.apply }}
      - --apply
      {{- end }}
      {{- range .Values.extraArgs }}
      - {{ . | quote }}
      {{- end }}
    env:
      - name: POD_NAMESPACE
        valueFrom:
          fieldRef:
            fieldPath: metadata.namespace
      - name: GOMEMLIMIT
        value: {{ .Values.goMemLimit | quote }}
      - name: GOGC
        value: {{ .Values.goGC | quote }}
      {{- with .Values.env }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
    {{- with .Values.secrets.envFrom }}
    envFrom:
      {{- range . }}
      - secretRef:
          name: {{ . }}
      {{- end }}
    {{- end }}
    {{- if or (eq .Values.mode "daemon") (include "reclaim.watchingAgent" .) }}
    ports:
      - name: http
        containerPort: {{ .Values.daemon.service.port }}
        protocol: TCP
    livenessProbe:
      httpGet:
        path: /healthz
        port: http
      periodSeconds: 20
      timeoutSeconds: 5
      failureThreshold: 3
    readinessProbe:
      httpGet:
        path: /readyz
        port: http
      periodSeconds: 10
      timeoutSeconds: 5
      failureThreshold: 3
    {{- end }}
    resources: {{- toYaml .Values.resources | nindent 6 }}
    securityContext: {{- toYaml .Values.securityContext | nindent 6 }}
    volumeMounts:
      - name: config
        mountPath: /etc/reclaim
        readOnly: true
      - name: tmp
        mountPath: /tmp
      {{- if .Values.secrets.kubeconfigs }}
      - name: kubeconfigs
        mountPath: /etc/reclaim-kubeconfig
        readOnly: true
      {{- end }}
      {{- range .Values.secrets.files }}
      - name: {{ .name }}
        mountPath: {{ .mountPath }}
        readOnly: true
      {{- end }}
volumes:
  - name: config
    configMap:
      name: {{ include "reclaim.fullname" . }}-config
  - name: tmp
    emptyDir:
      sizeLimit: 64Mi
  {{- if .Values.secrets.kubeconfigs }}
  - name: kubeconfigs
    secret:
      secretName: {{ .Values.secrets.kubeconfigs }}
      defaultMode: 0440
  {{- end }}
  {{- range .Values.secrets.files }}
  - name: {{ .name }}
    secret:
      secretName: {{ .secretName }}
      defaultMode: 0440
  {{- end }}
{{- end -}}

{{/* A deleter reading the agents' records (config.fleet.records): it
dials no cluster and deletes in none, so it gets no cluster RBAC but its
state's and its Lease's. */}}
{{- define "reclaim.readsRecords" -}}
{{- if and (ne .Values.mode "agent") (dig "fleet" "records" "" .Values.config) -}}true{{- end -}}
{{- end -}}

{{/* Whether a delete grant (rbac.deletePVCs, rbac.deleteWorkloads: the
argument) is installed: never for a deleter reading records; in agent mode
only with apply. */}}
{{- define "reclaim.grantsDelete" -}}
{{- $ := index . 0 -}}
{{- if and (index . 1) (not (include "reclaim.readsRecords" $)) (or (ne $.Values.mode "agent") $.Values.apply) -}}true{{- end -}}
{{- end -}}


{{/* The agent in watch mode (agent.watch): a Deployment running reclaim
daemon --agent instead of the CronJob. */}}
{{- define "reclaim.watchingAgent" -}}
{{- if and (eq .Values.mode "agent") .Values.agent.watch -}}true{{- end -}}
{{- end -}}
