//! The built-in facts a condition may name with `fact:`.
//!
//! Each fact is a fixed path into the evaluation context, with a type so
//! `lint` can reject `equals: "true"` on a boolean, and a group so that an
//! unknown group (`Facts::unknown`) makes the fact unknown and `onUnknown`
//! applies. The list is the policy API; a test keeps it in step with
//! [`crate::facts::Facts`] and with docs/policies.md.

/// The JSON type a fact holds when it is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactType {
    Bool,
    Number,
    String,
    /// A list of strings.
    StringList,
    /// A list of objects.
    ObjectList,
    /// A string → string map (labels, counts).
    Map,
    /// A whole group or sub-object; useful with `exists`.
    Object,
}

impl FactType {
    pub fn describe(self) -> &'static str {
        match self {
            FactType::Bool => "boolean",
            FactType::Number => "number",
            FactType::String => "string",
            FactType::StringList => "list of strings",
            FactType::ObjectList => "list of objects",
            FactType::Map => "map",
            FactType::Object => "object",
        }
    }
}

/// One built-in fact.
#[derive(Debug)]
pub struct FactSpec {
    /// What policies write after `fact:`.
    pub name: &'static str,
    pub ty: FactType,
    pub doc: &'static str,
}

impl FactSpec {
    /// The group that `Facts::unknown` names, or `None` for facts taken from
    /// the request itself (always known).
    pub fn group(&self) -> Option<&'static str> {
        let first = self.name.split('.').next().unwrap_or(self.name);
        if REQUEST_ROOTS.contains(&first) {
            None
        } else {
            Some(first)
        }
    }

    /// Path segments from the root of the evaluation context.
    pub fn context_path(&self) -> Vec<&'static str> {
        let segments = self.name.split('.');
        match self.group() {
            None => segments.collect(),
            Some(_) => std::iter::once("facts").chain(segments).collect(),
        }
    }
}

/// Context roots that come from the request, not from the cluster.
pub const REQUEST_ROOTS: &[&str] = &["intent", "target", "requester"];

/// Fact groups, as `Facts` serializes them (camelCase field names).
pub const GROUPS: &[&str] = &[
    "identity",
    "pod",
    "node",
    "owners",
    "leader",
    "volumes",
    "endpoints",
    "finalizers",
    "claim",
    "persistentVolume",
    "namespace",
];

macro_rules! facts {
    ($($name:literal : $ty:ident => $doc:literal,)*) => {
        &[$(FactSpec { name: $name, ty: FactType::$ty, doc: $doc },)*]
    };
}

/// Every built-in fact.
pub const FACTS: &[FactSpec] = facts! {
    "intent.type": String => "ForceDelete, Eviction, FinalizerRemoval or NamespaceFinalize",
    "intent.dryRun": Bool => "the request is a dry run (nothing is recorded)",
    "intent.removedFinalizers": StringList => "finalizers the request removes",
    "intent.objectDeleting": Bool => "finalizer removal: the object already has a deletionTimestamp",
    "intent.alreadyTerminating": Bool => "force delete: the pod was already terminating",
    "target.group": String => "API group of the target ('' for core)",
    "target.version": String => "API version of the target",
    "target.kind": String => "kind of the target",
    "target.resource": String => "plural resource, e.g. pods",
    "target.subresource": String => "e.g. eviction, finalize, status",
    "target.namespace": String => "namespace of the target",
    "target.name": String => "name of the target",
    "target.uid": String => "UID of the existing object",
    "requester.username": String => "who sent the request",
    "requester.groups": StringList => "the requester's groups",
    "identity": Object => "the target as forcegate's cluster view holds it (Unknown when the view lacks it or disagrees with the request)",
    "identity.uid": String => "UID of the cached target; cleanup records are named from it",
    "pod": Object => "the pod the request acts on",
    "pod.namespace": String => "pod namespace",
    "pod.name": String => "pod name",
    "pod.uid": String => "pod UID",
    "pod.nodeName": String => "node the pod is bound to",
    "pod.podIp": String => "primary pod IP",
    "pod.podIps": StringList => "all pod IPs",
    "pod.phase": String => "Pending, Running, Succeeded, Failed, Unknown",
    "pod.terminating": Bool => "the pod has a deletionTimestamp",
    "pod.labels": Map => "pod labels",
    "pod.claims": StringList => "PersistentVolumeClaims the pod mounts",
    "pod.finalizers": StringList => "the pod's metadata.finalizers as they are now",
    "node": Object => "the pod's node",
    "node.name": String => "node name",
    "node.exists": Bool => "the Node object exists",
    "node.ready": Bool => "the Ready condition is True",
    "node.heartbeatAgeSeconds": Number => "seconds since the Ready condition's last heartbeat",
    "node.unreachable": Bool => "tainted node.kubernetes.io/unreachable",
    "node.outOfService": Bool => "tainted node.kubernetes.io/out-of-service",
    "node.fenced": Bool => "gone or out-of-service: its workloads can no longer run",
    "node.readyStatus": String => "the Ready condition's status as written (True, False, Unknown)",
    "node.taints": StringList => "keys of the node's taints",
    "owners": Object => "the pod's owner chain",
    "owners.chain": ObjectList => "controllers from the pod up to the root ({kind, name, uid})",
    "owners.statefulSet": String => "name of the owning StatefulSet",
    "owners.job": Object => "the owning Job",
    "owners.job.name": String => "Job name",
    "owners.job.active": Number => "active pods of the Job",
    "owners.job.succeeded": Number => "succeeded pods of the Job",
    "owners.job.failed": Number => "failed pods of the Job",
    "owners.job.finished": Bool => "the Job has a Complete or Failed condition",
    "owners.job.trackingFinalizer": Bool => "the pod still carries batch.kubernetes.io/job-tracking",
    "owners.job.exists": Bool => "the Job object exists (false: only the ownerReference names it)",
    "owners.cronJob": Object => "the CronJob owning the Job",
    "owners.cronJob.name": String => "CronJob name",
    "owners.cronJob.concurrencyPolicy": String => "Allow, Forbid or Replace",
    "owners.cronJob.suspend": Bool => "the CronJob is suspended",
    "owners.cronJob.active": Number => "running Jobs of the CronJob",
    "leader": Object => "leadership the pod holds",
    "leader.isLeader": Bool => "holds an unexpired Lease or a legacy leader record",
    "leader.leases": ObjectList => "Leases held ({namespace, name, holder, expired, expiresInSeconds})",
    "leader.legacyRecords": StringList => "legacy leader records (Kind/name)",
    "volumes": Object => "the pod's persistent volumes",
    "volumes.claims": ObjectList => "per claim: {claim, persistentVolume, accessModes, attachments, attachedOnPodNode}",
    "volumes.attachedOnPodNode": Bool => "a claim's PV is attached on the pod's node",
    "volumes.attachedElsewhere": Bool => "a claim's PV is attached on another node",
    "endpoints": Object => "EndpointSlices still pointing at the pod",
    "endpoints.slices": StringList => "EndpointSlice names",
    "endpoints.referenced": Bool => "some EndpointSlice still references the pod",
    "finalizers": ObjectList => "per removed finalizer: {name, owner, ownerUsers, wellKnown}",
    "claim": Object => "the PVC whose finalizer is removed",
    "claim.namespace": String => "PVC namespace",
    "claim.name": String => "PVC name",
    "claim.volumeName": String => "bound PV",
    "claim.usedBy": StringList => "non-terminal pods mounting the claim",
    "claim.inUse": Bool => "some non-terminal pod mounts the claim",
    "persistentVolume": Object => "the PV whose finalizer is removed",
    "persistentVolume.name": String => "PV name",
    "persistentVolume.phase": String => "Available, Bound, Released, Failed",
    "persistentVolume.bound": Bool => "bound to a claim",
    "persistentVolume.claim": String => "namespace/name of the bound claim",
    "persistentVolume.attached": Bool => "some VolumeAttachment is attached",
    "persistentVolume.attachments": ObjectList => "VolumeAttachments ({name, node, attached})",
    "namespace": Object => "the namespace being finalized",
    "namespace.name": String => "namespace name",
    "namespace.exists": Bool => "the Namespace object exists",
    "namespace.phase": String => "Active or Terminating",
    "namespace.counts": Map => "objects per kind still in the namespace",
    "namespace.total": Number => "objects still in the namespace",
    "namespace.empty": Bool => "no objects of the kinds forcegate knows are left",
    "namespace.countedKinds": StringList => "the kinds counts covers",
};

/// Look a fact up by name.
pub fn lookup(name: &str) -> Option<&'static FactSpec> {
    FACTS.iter().find(|f| f.name == name)
}

/// The closest known fact names, for "did you mean" hints.
pub fn suggest(name: &str) -> Option<&'static str> {
    FACTS
        .iter()
        .map(|f| (edit_distance(name, f.name), f.name))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Normalize a group name as `Facts::unknown` may spell it (`persistent_volume`,
/// `persistentVolume`, `PersistentVolume`).
pub fn normalize_group(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests;
