//! The facts and the request's identity as [`Walk`] values: each struct's
//! members by the JSON name policies write, in JSON (sorted) order. A
//! test walks every member of fully populated facts both ways, so a field
//! added to a struct but not here fails it.

use crate::cluster::Unknown;
use crate::facts::{
    AttachmentFacts, ClaimFacts, ClaimVolume, CronJobFacts, EndpointFacts, Facts, FinalizerFacts,
    IdentityFacts, JobFacts, LeaderFacts, LeaseFacts, NamespaceFacts, NodeFacts, OwnerFacts,
    OwnerRef, PersistentVolumeFacts, PodFacts, VolumeFacts,
};
use crate::intent::{IntentKind, ObjectRef, Requester};
use crate::policy::extract::typed::{Walk, walk_struct};

use super::{IntentDocument, SettingsDocument};

walk_struct!(IntentDocument<'_> {
    "alreadyTerminating" => ?already_terminating,
    "dryRun" => dry_run,
    "kind" => kind,
    "objectDeleting" => ?object_deleting,
    "removedFinalizers" => removed_finalizers,
    "requester" => requester,
    "target" => target,
    "type" => type_name,
});

/// Tagged by `type`, with each variant's own members: walked in its JSON.
impl Walk for IntentKind {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn walks_as_json(&self) -> bool {
        true
    }
}

walk_struct!(SettingsDocument<'_> {
    "breakGlassGroup" => break_glass_group,
});

walk_struct!(Facts {
    "claim" => claim,
    "endpoints" => endpoints,
    "finalizers" => finalizers,
    "identity" => identity,
    "leader" => leader,
    "namespace" => namespace,
    "node" => node,
    "owners" => owners,
    "persistentVolume" => persistent_volume,
    "pod" => pod,
    "unknown" => unknown,
    "volumes" => volumes,
});

walk_struct!(PodFacts {
    "claims" => claims,
    "finalizers" => finalizers,
    "labels" => labels,
    "name" => name,
    "namespace" => namespace,
    "nodeName" => node_name,
    "phase" => phase,
    "podIp" => pod_ip,
    "podIps" => pod_ips,
    "terminating" => terminating,
    "uid" => uid,
});

walk_struct!(NodeFacts {
    "exists" => exists,
    "fenced" => fenced,
    "heartbeatAgeSeconds" => heartbeat_age_seconds,
    "name" => name,
    "outOfService" => out_of_service,
    "ready" => ready,
    "readyStatus" => ready_status,
    "taints" => taints,
    "unreachable" => unreachable,
});

walk_struct!(OwnerRef {
    "kind" => kind,
    "name" => name,
    "uid" => uid,
});

walk_struct!(OwnerFacts {
    "chain" => chain,
    "cronJob" => cron_job,
    "job" => job,
    "statefulSet" => stateful_set,
});

walk_struct!(JobFacts {
    "active" => active,
    "exists" => exists,
    "failed" => failed,
    "finished" => finished,
    "name" => name,
    "succeeded" => succeeded,
    "trackingFinalizer" => tracking_finalizer,
});

walk_struct!(CronJobFacts {
    "active" => active,
    "concurrencyPolicy" => concurrency_policy,
    "name" => name,
    "suspend" => suspend,
});

walk_struct!(LeaseFacts {
    "expired" => expired,
    "expiresInSeconds" => expires_in_seconds,
    "holder" => holder,
    "name" => name,
    "namespace" => namespace,
});

walk_struct!(LeaderFacts {
    "isLeader" => is_leader,
    "leases" => leases,
    "legacyRecords" => legacy_records,
});

walk_struct!(AttachmentFacts {
    "attached" => attached,
    "name" => name,
    "node" => node,
});

walk_struct!(ClaimVolume {
    "accessModes" => access_modes,
    "attachedElsewhere" => attached_elsewhere,
    "attachedOnPodNode" => attached_on_pod_node,
    "attachments" => attachments,
    "claim" => claim,
    "persistentVolume" => persistent_volume,
});

walk_struct!(VolumeFacts {
    "attachedElsewhere" => attached_elsewhere,
    "attachedOnPodNode" => attached_on_pod_node,
    "claims" => claims,
});

walk_struct!(IdentityFacts {
    "uid" => uid,
});

walk_struct!(EndpointFacts {
    "referenced" => referenced,
    "slices" => slices,
});

walk_struct!(FinalizerFacts {
    "name" => name,
    "owner" => owner,
    "ownerUsers" => owner_users,
    "wellKnown" => well_known,
});

walk_struct!(ClaimFacts {
    "inUse" => in_use,
    "name" => name,
    "namespace" => namespace,
    "usedBy" => used_by,
    "volumeName" => volume_name,
});

walk_struct!(PersistentVolumeFacts {
    "attached" => attached,
    "attachments" => attachments,
    "bound" => bound,
    "claim" => claim,
    "name" => name,
    "phase" => phase,
});

walk_struct!(NamespaceFacts {
    "countedKinds" => counted_kinds,
    "counts" => counts,
    "empty" => empty,
    "exists" => exists,
    "name" => name,
    "phase" => phase,
    "total" => total,
});

walk_struct!(Unknown {
    "kind" => kind,
    "reason" => reason,
});

walk_struct!(ObjectRef {
    "group" => group,
    "kind" => kind,
    "name" => name,
    "namespace" => ?namespace,
    "resource" => resource,
    "subresource" => ?subresource,
    "uid" => ?uid,
    "version" => version,
});

walk_struct!(Requester {
    "groups" => groups,
    "username" => username,
});

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use jsonpath_rust::parser::parse_json_path;
    use serde::Serialize;
    use serde_json::Value;

    use super::*;
    use crate::policy::extract::typed::{self, Walk};
    use crate::policy::extract::{self, Plan, Rest};
    use crate::policy::message;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    fn attachment(node: &str, attached: bool) -> AttachmentFacts {
        AttachmentFacts {
            name: format!("csi-{node}"),
            node: node.into(),
            attached,
        }
    }

    /// Every group present, every list two long, every option set once and
    /// unset once, so every member of every struct is in the JSON.
    fn populated() -> Facts {
        let lease = |name: &str, expires: Option<i64>| LeaseFacts {
            namespace: "shop".into(),
            name: name.into(),
            holder: "db-0".into(),
            expired: expires.is_none(),
            expires_in_seconds: expires,
        };
        let claim = |claim: &str, on_node: bool| ClaimVolume {
            claim: claim.into(),
            persistent_volume: on_node.then(|| format!("pv-{claim}")),
            access_modes: strings(&["ReadWriteOnce", "ReadOnlyMany"]),
            attachments: vec![attachment("n1", on_node), attachment("n2", !on_node)],
            attached_on_pod_node: on_node,
            attached_elsewhere: !on_node,
        };
        Facts {
            identity: Some(IdentityFacts { uid: "u-1".into() }),
            pod: Some(PodFacts {
                namespace: "shop".into(),
                name: "db-0".into(),
                uid: "u-1".into(),
                node_name: Some("n1".into()),
                pod_ip: Some("10.0.0.1".into()),
                pod_ips: strings(&["10.0.0.1", "fd00::1"]),
                phase: None,
                terminating: true,
                labels: BTreeMap::from([
                    ("role".into(), "leader".into()),
                    ("a.b/c".into(), "x".into()),
                ]),
                claims: strings(&["data-db-0", "wal-db-0"]),
                finalizers: strings(&["example.com/a", "example.com/b"]),
            }),
            node: Some(NodeFacts {
                name: "n1".into(),
                exists: true,
                ready: false,
                heartbeat_age_seconds: Some(93),
                unreachable: true,
                out_of_service: false,
                fenced: false,
                ready_status: None,
                taints: strings(&["node.kubernetes.io/unreachable", "dedicated"]),
            }),
            owners: Some(OwnerFacts {
                chain: vec![
                    OwnerRef {
                        kind: "Job".into(),
                        name: "report".into(),
                        uid: Some("u-2".into()),
                    },
                    OwnerRef {
                        kind: "CronJob".into(),
                        name: "nightly".into(),
                        uid: None,
                    },
                ],
                stateful_set: Some("db".into()),
                job: Some(JobFacts {
                    name: "report".into(),
                    active: 1,
                    succeeded: 2,
                    failed: 3,
                    finished: false,
                    tracking_finalizer: true,
                    exists: true,
                }),
                cron_job: Some(CronJobFacts {
                    name: "nightly".into(),
                    concurrency_policy: "Forbid".into(),
                    suspend: false,
                    active: 1,
                }),
            }),
            leader: Some(LeaderFacts {
                is_leader: true,
                leases: vec![lease("db-leader", Some(12)), lease("db-old", None)],
                legacy_records: strings(&["Endpoints/db", "ConfigMap/db"]),
            }),
            volumes: Some(VolumeFacts {
                claims: vec![claim("data-db-0", true), claim("wal-db-0", false)],
                attached_on_pod_node: true,
                attached_elsewhere: true,
            }),
            endpoints: Some(EndpointFacts {
                slices: strings(&["db-abc", "db-def"]),
                referenced: true,
            }),
            finalizers: vec![
                FinalizerFacts {
                    name: "kubernetes.io/pvc-protection".into(),
                    owner: Some("pvc-protection-controller".into()),
                    owner_users: strings(&[
                        "system:serviceaccount:kube-system:pvc-protection-controller",
                        "x",
                    ]),
                    well_known: true,
                },
                FinalizerFacts {
                    name: "example.com/x".into(),
                    owner: None,
                    owner_users: Vec::new(),
                    well_known: false,
                },
            ],
            claim: Some(ClaimFacts {
                namespace: "shop".into(),
                name: "data-db-0".into(),
                volume_name: None,
                used_by: strings(&["db-0", "backup"]),
                in_use: true,
            }),
            persistent_volume: Some(PersistentVolumeFacts {
                name: "pv-1".into(),
                phase: Some("Bound".into()),
                bound: true,
                claim: None,
                attached: true,
                attachments: vec![attachment("n1", true), attachment("n2", false)],
            }),
            namespace: Some(NamespaceFacts {
                name: "shop".into(),
                exists: true,
                phase: Some("Terminating".into()),
                counts: BTreeMap::from([("Pod".into(), 2), ("ConfigMap".into(), 0)]),
                total: 2,
                empty: false,
                counted_kinds: strings(&["Pod", "ConfigMap"]),
            }),
            unknown: BTreeMap::from([(
                "endpoints".into(),
                Unknown {
                    kind: "EndpointSlice".into(),
                    reason: "watch not synced".into(),
                },
            )]),
        }
    }

    /// The typed walk selects, path by path, what the JSON walk selects in
    /// the value's serialization, and each value it reaches is null and
    /// shows as text as its JSON does; returns how many paths selected
    /// something.
    fn walks_as_json<T: Walk + Serialize>(value: &T) -> usize {
        let json = serde_json::to_value(value).unwrap();
        assert_eq!(value.to_json(), json);
        let mut selecting = 0;
        for steps in typed::every_path(&json) {
            let mut typed = Vec::new();
            typed::reach(value, &steps, &mut |found| {
                let mut text = String::new();
                found.push_text(&mut text);
                typed.push((found.to_json(), found.is_null(), text));
            });
            let mut plain = Vec::new();
            extract::walk(&json, &steps, &mut plain);
            let plain: Vec<(Value, bool, String)> = plain
                .into_iter()
                .map(|v| {
                    let mut text = String::new();
                    message::push_value(&mut text, v);
                    (v.clone(), v.is_null(), text)
                })
                .collect();
            assert_eq!(typed, plain, "{steps:?}");
            selecting += usize::from(!typed.is_empty());
        }
        selecting
    }

    #[test]
    fn every_member_walks_as_its_json() {
        let facts = populated();
        // 377 paths select something: a test that selects nothing proves nothing.
        let selecting = walks_as_json(&facts);
        assert!(selecting > 350, "{selecting}");
        assert!(walks_as_json(&Facts::default()) > 0);
        let full = ObjectRef {
            group: "apps".into(),
            version: "v1".into(),
            kind: "StatefulSet".into(),
            resource: "statefulsets".into(),
            subresource: Some("status".into()),
            namespace: Some("shop".into()),
            name: "db".into(),
            uid: Some("u-3".into()),
        };
        assert!(walks_as_json(&full) > 8);
        // Unset, the skipped options are no member at all (not null).
        assert!(walks_as_json(&ObjectRef::default()) > 0);
        let requester = Requester {
            username: "alice".into(),
            groups: strings(&["oncall", "system:authenticated"]),
        };
        assert!(walks_as_json(&requester) > 4);
    }

    /// Filters run on the typed elements select what they select in JSON.
    #[test]
    fn filters_walk_as_on_the_json() {
        let facts = populated();
        let json = serde_json::to_value(&facts).unwrap();
        let cases = [
            ("$.volumes.claims[?@.attachedOnPodNode == true].claim", 1),
            ("$.volumes.claims[?@.attachedOnPodNode != true].claim", 1),
            (
                "$.volumes.claims[?@.attachments[1].node == 'n2'].attachments[*].attached",
                4,
            ),
            (
                "$.volumes.claims[*].attachments[?@.attached == true].node",
                2,
            ),
            (
                "$.persistentVolume.attachments[?@.attached == true].node",
                1,
            ),
            ("$.persistentVolume.attachments[?true == @.attached]", 1),
            ("$.leader.leases[?@.expiresInSeconds == 12].name", 1),
            ("$.leader.leases[?@.expiresInSeconds == 12.0].name", 1),
            ("$.leader.leases[?@.expiresInSeconds == null].name", 1),
            ("$.leader.leases[?@.missing != 'x'].name", 2),
            ("$.namespace.counts[?@ == 2]", 1),
            ("$.pod.labels[?@ == 'leader']", 1),
            ("$.node[?@ == true]", 2),
            ("$.finalizers[?@.owner == null].name", 1),
            ("$.owners.chain[?@.uid == 'u-2'].kind", 1),
        ];
        for (path, expected) in cases {
            let plan = Plan::new(parse_json_path(path).expect(path));
            let Plan::Rooted {
                prefix,
                rest: Rest::Walk(rest),
            } = &plan
            else {
                panic!("{path} is not a walked filter: {plan:?}");
            };
            let mut typed = Vec::new();
            typed::reach_rooted(&facts, prefix, rest, &mut |v| typed.push(v.to_json()));
            let plain = extract::run(&plan, &json, || &json);
            assert_eq!(typed, plain, "{path}");
            assert_eq!(typed.len(), expected, "{path}: {typed:?}");
        }
    }
}
