{{/* Name of every object: the release name, or forcegate inside it. */}}
{{- define "forcegate.fullname" -}}
{{- if contains "forcegate" .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-forcegate" .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "forcegate.selectorLabels" -}}
app.kubernetes.io/name: forcegate
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "forcegate.labels" -}}
{{ include "forcegate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: forcegate
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The label selector forcegate finds its own webhook configurations by. */}}
{{- define "forcegate.webhookSelector" -}}
app.kubernetes.io/name=forcegate,app.kubernetes.io/instance={{ .Release.Name }}
{{- end -}}

{{- define "forcegate.tlsSecret" -}}
{{- if eq .Values.certificates.mode "secret" -}}
{{- required "certificates.secretName is required in secret mode" .Values.certificates.secretName -}}
{{- else -}}
{{- include "forcegate.fullname" . }}-tls
{{- end -}}
{{- end -}}

{{/* A CEL list of quoted strings. */}}
{{- define "forcegate.celList" -}}
[{{ range $i, $item := . }}{{ if $i }}, {{ end }}'{{ $item }}'{{ end }}]
{{- end -}}

{{/* Every entry of <part>.finalizers the update drops is owned by the requester. */}}
{{- define "forcegate.allRemovedOwned" -}}
{{- $old := printf "oldObject.%s" .part -}}
{{- $new := printf "object.%s" .part -}}
{{- if eq .part "metadata" -}}
(!has({{ $old }}.finalizers) || {{ $old }}.finalizers.all(f, (has({{ $new }}.finalizers) && f in {{ $new }}.finalizers) || (request.userInfo.username + ' ' + f) in {{ include "forcegate.celList" .owners }}))
{{- else -}}
(!has({{ $old }}) || !has({{ $old }}.finalizers) || {{ $old }}.finalizers.all(f, (has({{ $new }}) && has({{ $new }}.finalizers) && f in {{ $new }}.finalizers) || (request.userInfo.username + ' ' + f) in {{ include "forcegate.celList" .owners }}))
{{- end -}}
{{- end -}}

{{- define "forcegate.notTheFinalizerOwner" -}}
!({{ include "forcegate.allRemovedOwned" (dict "part" "metadata" "owners" .Values.trustedUsers.finalizerOwners) }})
{{- end -}}

{{- define "forcegate.notTheNamespaceFinalizerOwner" -}}
!({{ include "forcegate.allRemovedOwned" (dict "part" "spec" "owners" .Values.trustedUsers.namespaceFinalizerOwners) }} && {{ include "forcegate.allRemovedOwned" (dict "part" "metadata" "owners" .Values.trustedUsers.finalizerOwners) }})
{{- end -}}

{{- define "forcegate.removesAMetadataFinalizer" -}}
(oldObject != null && object != null && has(oldObject.metadata.finalizers) && oldObject.metadata.finalizers.exists(f, !(has(object.metadata.finalizers) && f in object.metadata.finalizers)))
{{- end -}}

{{- define "forcegate.removesANamespaceFinalizer" -}}
(oldObject != null && object != null && has(oldObject.spec) && has(oldObject.spec.finalizers) && oldObject.spec.finalizers.exists(f, !(has(object.spec) && has(object.spec.finalizers) && f in object.spec.finalizers))) || {{ include "forcegate.removesAMetadataFinalizer" . }}
{{- end -}}

{{- define "forcegate.notThePodsOwnKubelet" -}}
!('system:nodes' in request.userInfo.groups && oldObject != null && has(oldObject.spec.nodeName) && request.userInfo.username == 'system:node:' + oldObject.spec.nodeName)
{{- end -}}

{{/* What every webhook entry shares: client, selector, versions. */}}
{{- define "forcegate.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "forcegate.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if eq .root.Values.certificates.mode "secret" }}
  caBundle: {{ required "certificates.caBundle is required in secret mode" .root.Values.certificates.caBundle }}
  {{- end }}
{{- if not .clusterScoped }}
namespaceSelector:
  matchExpressions:
  - key: kubernetes.io/metadata.name
    operator: NotIn
    values: {{ prepend .root.Values.webhook.excludedNamespaces .root.Release.Namespace | toJson }}
{{- end }}
{{- end -}}

{{/* The finalizer rules, shared by the validating and mutating entries. */}}
{{- define "forcegate.finalizerRules" -}}
rules:
- operations: [UPDATE]
  apiGroups: [""]
  apiVersions: [v1]
  resources: [pods, pods/status, persistentvolumeclaims, persistentvolumeclaims/status, persistentvolumes, persistentvolumes/status, namespaces, namespaces/status, services, services/status]
- operations: [UPDATE]
  apiGroups: [apps]
  apiVersions: [v1]
  resources: [deployments, deployments/status, replicasets, replicasets/status, statefulsets, statefulsets/status, daemonsets, daemonsets/status]
- operations: [UPDATE]
  apiGroups: [batch]
  apiVersions: [v1]
  resources: [jobs, jobs/status, cronjobs, cronjobs/status]
{{- end -}}

{{- define "forcegate.finalizerConditions" -}}
matchConditions:
- name: removes-a-finalizer
  expression: {{ include "forcegate.removesAMetadataFinalizer" . | quote }}
- name: not-the-finalizer-owner
  expression: {{ include "forcegate.notTheFinalizerOwner" . | quote }}
{{- end -}}

{{- define "forcegate.namespaceFinalizeConditions" -}}
rules:
- operations: [UPDATE]
  apiGroups: [""]
  apiVersions: [v1]
  resources: [namespaces/finalize]
matchConditions:
- name: removes-a-finalizer
  expression: {{ include "forcegate.removesANamespaceFinalizer" . | quote }}
- name: not-the-finalizer-owner
  expression: {{ include "forcegate.notTheNamespaceFinalizerOwner" . | quote }}
{{- end -}}
