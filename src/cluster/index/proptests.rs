//! Property: after any sequence of apply/delete/re-list, every lookup agrees
//! with a naive scan over the objects that should be there.

use std::collections::{BTreeMap, HashSet};

use proptest::prelude::*;

use super::tests::{attachment, lease, legacy, pod, slice};
use super::*;

const NAMESPACES: [&str; 2] = ["a", "b"];
const NAMES: [&str; 4] = ["p0", "p1", "p2", "p3"];
const CLAIMS: [&str; 3] = ["c0", "c1", "p0-scratch"];
const NODES: [&str; 2] = ["n0", "n1"];
const PVS: [&str; 2] = ["pv0", "pv1"];
const IPS: [&str; 3] = ["10.0.0.1", "10.0.0.2", "10.0.0.3"];

#[derive(Clone, Debug)]
enum Op {
    Apply(Object),
    Delete(Kind, ObjectKey),
    Relist(Kind, Vec<Object>),
}

fn pick<T: Copy + std::fmt::Debug + 'static>(items: &'static [T]) -> impl Strategy<Value = T> {
    proptest::sample::select(items)
}

/// UIDs derive from the key plus a generation: unique per object, new on
/// re-creation, as in a real cluster.
fn uid_of(ns: &str, name: &str, generation: u8) -> String {
    format!("{ns}-{name}-{generation}")
}

fn any_pod() -> impl Strategy<Value = Object> {
    (
        pick(&NAMESPACES),
        pick(&NAMES),
        0u8..2,
        proptest::sample::subsequence(&CLAIMS[..2], 0..=2),
        any::<bool>(),
    )
        .prop_map(|(ns, name, generation, claims, ephemeral)| {
            pod(ns, name, &uid_of(ns, name, generation), &claims, ephemeral)
        })
}

fn any_holder() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        pick(&NAMES).prop_map(|p| Some(p.to_owned())),
        pick(&NAMES).prop_map(|p| Some(format!("{p}_x"))),
        pick(&NAMES).prop_map(|p| Some(format!("{p}1_x"))),
    ]
}

fn any_slice() -> impl Strategy<Value = Object> {
    let endpoint = (
        proptest::option::of((pick(&NAMESPACES), pick(&NAMES), 0u8..2)),
        proptest::sample::subsequence(&IPS[..], 0..=2),
    );
    (
        pick(&NAMESPACES),
        pick(&["s0", "s1"]),
        proptest::collection::vec(endpoint, 0..3),
    )
        .prop_map(|(ns, name, endpoints)| {
            let uids: Vec<Option<String>> = endpoints
                .iter()
                .map(|(target, _)| target.map(|(ns, n, g)| uid_of(ns, n, g)))
                .collect();
            let eps: Vec<(Option<&str>, &[&str])> = endpoints
                .iter()
                .zip(&uids)
                .map(|((_, ips), uid)| (uid.as_deref(), ips.as_slice()))
                .collect();
            slice(ns, name, &eps)
        })
}

fn any_object() -> impl Strategy<Value = Object> {
    prop_oneof![
        3 => any_pod(),
        2 => (pick(&NAMESPACES), pick(&["l0", "l1"]), any_holder())
            .prop_map(|(ns, name, holder)| lease(ns, name, holder.as_deref())),
        2 => (pick(&["va0", "va1", "va2"]), pick(&PVS), pick(&NODES))
            .prop_map(|(name, pv, node)| attachment(name, pv, node)),
        2 => any_slice(),
        2 => (pick(&[Kind::ConfigMap, Kind::Endpoints]), pick(&NAMESPACES), pick(&["m0", "m1"]), any_holder())
            .prop_map(|(kind, ns, name, holder)| legacy(kind, ns, name, holder.as_deref())),
        1 => (pick(&NAMESPACES), pick(&NAMES)).prop_map(|(ns, name)| Object::from(
            k8s_openapi::api::batch::v1::Job { metadata: super::tests::meta(ns, name), ..Default::default() })),
        1 => pick(&NODES).prop_map(|name| Object::from(
            k8s_openapi::api::core::v1::Node { metadata: super::tests::meta("", name), ..Default::default() })),
    ]
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => any_object().prop_map(Op::Apply),
        3 => any_object().prop_map(|o| Op::Delete(o.kind(), o.key())),
        1 => proptest::collection::vec(any_object(), 0..5).prop_map(|objects| {
            let kind = objects.first().map_or(Kind::Pod, Object::kind);
            Op::Relist(kind, objects)
        }),
    ]
}

/// The naive model: just the objects, keyed like the API server keys them.
#[derive(Default)]
struct Model {
    objects: BTreeMap<(Kind, ObjectKey), Object>,
}

impl Model {
    fn run(&mut self, op: &Op) {
        match op {
            Op::Apply(o) => {
                self.objects.insert((o.kind(), o.key()), o.clone());
            }
            Op::Delete(kind, key) => {
                self.objects.remove(&(*kind, key.clone()));
            }
            Op::Relist(kind, objects) => {
                self.objects.retain(|(k, _), _| k != kind);
                for o in objects.iter().filter(|o| o.kind() == *kind) {
                    self.objects.insert((o.kind(), o.key()), o.clone());
                }
            }
        }
    }

    fn of(&self, kind: Kind) -> impl Iterator<Item = (&ObjectKey, &Object)> {
        self.objects
            .iter()
            .filter(move |((k, _), _)| *k == kind)
            .map(|((_, key), o)| (key, o))
    }
}

fn pods_of(model: &Model) -> Vec<(&ObjectKey, &Pod)> {
    model
        .of(Kind::Pod)
        .filter_map(|(k, o)| match o {
            Object::Pod(p) => Some((k, p.as_ref())),
            _ => None,
        })
        .collect()
}

fn check(index: &Index, model: &Model) -> Result<(), TestCaseError> {
    for kind in Kind::ALL {
        let expected: Vec<ObjectKey> = model.of(kind).map(|(k, _)| k.clone()).collect();
        prop_assert_eq!(index.keys(kind), expected, "keys of {}", kind);
    }
    let pods = pods_of(model);
    for (key, pod) in &pods {
        let uid = pod.meta.uid.clone().unwrap_or_default();
        let by_uid = index.pod_by_uid(&uid);
        prop_assert_eq!(by_uid.as_deref(), Some(*pod));
        let by_key = index.pod(&key.namespace, &key.name);
        prop_assert_eq!(by_key.as_deref(), Some(*pod));
    }
    let live_uids: HashSet<String> = pods
        .iter()
        .filter_map(|(_, p)| p.meta.uid.clone())
        .collect();
    for ns in NAMESPACES {
        for name in NAMES {
            for generation in 0..2 {
                let uid = uid_of(ns, name, generation);
                if !live_uids.contains(&uid) {
                    prop_assert!(index.pod_by_uid(&uid).is_none(), "stale uid {}", uid);
                }
                // EndpointSlices by UID and/or IP.
                for ip in IPS.iter().map(Some).chain([None]) {
                    let expected: Vec<ObjectKey> = model
                        .of(Kind::EndpointSlice)
                        .filter(|(_, o)| match o {
                            Object::EndpointSlice(s) => {
                                keys::slice_pod_uids(s).contains(&uid)
                                    || ip.is_some_and(|ip| {
                                        keys::slice_addresses(s).iter().any(|a| a == ip)
                                    })
                            }
                            _ => false,
                        })
                        .map(|(k, _)| k.clone())
                        .collect();
                    let found: Vec<ObjectKey> = index
                        .endpoint_slices_for_pod(&uid, ip.copied())
                        .iter()
                        .map(|s| ObjectKey::new(&s.meta.namespace, &s.meta.name))
                        .collect();
                    prop_assert_eq!(found, expected);
                }
            }
        }
        for claim in CLAIMS {
            let expected: Vec<String> = pods
                .iter()
                .filter(|(k, p)| {
                    k.namespace == ns && keys::pod_claims(p).iter().any(|c| c == claim)
                })
                .map(|(k, _)| k.name.clone())
                .collect();
            let found: Vec<String> = index
                .pods_using_claim(ns, claim)
                .iter()
                .map(|p| p.meta.name.clone())
                .collect();
            prop_assert_eq!(found, expected, "claim {}/{}", ns, claim);
        }
        for holder in NAMES.iter().copied().chain(["p01"]) {
            let expected: Vec<String> = model
                .of(Kind::Lease)
                .filter(|(k, o)| {
                    k.namespace == ns
                        && matches!(o, Object::Lease(l) if keys::lease_holder(l).is_some_and(|h| keys::holder_matches(h, holder)))
                })
                .map(|(k, _)| k.name.clone())
                .collect();
            let found: Vec<String> = index
                .leases_held_by(ns, holder)
                .iter()
                .map(|l| l.meta.name.clone())
                .collect();
            prop_assert_eq!(found, expected, "leases of {}/{}", ns, holder);

            let mut expected: Vec<(String, String)> = [Kind::ConfigMap, Kind::Endpoints]
                .into_iter()
                .flat_map(|kind| model.of(kind).map(move |(k, o)| (kind, k, o)))
                .filter(|(_, k, o)| {
                    k.namespace == ns
                        && matches!(o, Object::ConfigMap(m) | Object::Endpoints(m) if keys::legacy_record(m)
                            .and_then(|r| r.holder)
                            .is_some_and(|h| keys::holder_matches(&h, holder)))
                })
                .map(|(kind, k, _)| (kind.name().to_owned(), k.name.clone()))
                .collect();
            expected.sort();
            let found: Vec<(String, String)> = index
                .legacy_leader_records(ns, holder)
                .into_iter()
                .map(|(kind, name, _)| (kind, name))
                .collect();
            prop_assert_eq!(found, expected, "legacy records of {}/{}", ns, holder);
        }
        let mut expected_counts: BTreeMap<String, u64> = BTreeMap::new();
        for (kind, key) in model.objects.keys() {
            if kind.namespaced() && key.namespace == ns {
                *expected_counts.entry(kind.name().to_owned()).or_default() += 1;
            }
        }
        prop_assert_eq!(index.namespace_counts(ns), expected_counts);
    }
    for pv in PVS {
        let expected: Vec<String> = model
            .of(Kind::VolumeAttachment)
            .filter(|(_, o)| matches!(o, Object::VolumeAttachment(v) if keys::attachment_pv(v) == Some(pv)))
            .map(|(k, _)| k.name.clone())
            .collect();
        let found: Vec<String> = index
            .volume_attachments_for_pv(pv)
            .iter()
            .map(|v| v.meta.name.clone())
            .collect();
        prop_assert_eq!(found, expected);
    }
    for node in NODES {
        let expected: Vec<String> = model
            .of(Kind::VolumeAttachment)
            .filter(|(_, o)| matches!(o, Object::VolumeAttachment(v) if keys::attachment_node(v) == Some(node)))
            .map(|(k, _)| k.name.clone())
            .collect();
        let found: Vec<String> = index
            .volume_attachments_on_node(node)
            .iter()
            .map(|v| v.meta.name.clone())
            .collect();
        prop_assert_eq!(found, expected);
    }
    // Secondary indexes never keep keys nothing references.
    prop_assert!(index.pods_by_claim.keys() <= index.len(Kind::Pod) * 3);
    prop_assert!(index.pod_by_uid.len() == index.len(Kind::Pod));
    prop_assert!(index.leases_by_holder.keys() <= index.len(Kind::Lease));
    prop_assert!(index.attachments_by_pv.keys() <= index.len(Kind::VolumeAttachment));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn indexes_match_a_naive_scan(ops in proptest::collection::vec(any_op(), 1..40)) {
        let mut index = Index::new();
        let mut model = Model::default();
        for op in &ops {
            match op.clone() {
                Op::Apply(o) => index.apply(o),
                Op::Delete(kind, key) => index.delete(kind, &key),
                Op::Relist(kind, objects) => index.replace_kind(kind, objects),
            }
            model.run(op);
        }
        check(&index, &model)?;
    }
}
