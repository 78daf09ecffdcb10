use super::*;
use crate::facts::*;

/// A `Facts` with every group present, so every catalog path must resolve.
fn full_facts() -> Facts {
    let job = JobFacts {
        name: "j".into(),
        ..Default::default()
    };
    Facts {
        identity: Some(IdentityFacts { uid: "u".into() }),
        pod: Some(PodFacts {
            node_name: Some("n".into()),
            pod_ip: Some("10.0.0.1".into()),
            phase: Some("Running".into()),
            ..Default::default()
        }),
        node: Some(NodeFacts {
            heartbeat_age_seconds: Some(1),
            ready_status: Some("True".into()),
            ..Default::default()
        }),
        owners: Some(OwnerFacts {
            stateful_set: Some("s".into()),
            job: Some(job),
            cron_job: Some(CronJobFacts::default()),
            ..Default::default()
        }),
        leader: Some(LeaderFacts::default()),
        volumes: Some(VolumeFacts::default()),
        endpoints: Some(EndpointFacts::default()),
        finalizers: vec![FinalizerFacts::default()],
        claim: Some(ClaimFacts {
            volume_name: Some("pv".into()),
            ..Default::default()
        }),
        persistent_volume: Some(PersistentVolumeFacts {
            phase: Some("Bound".into()),
            claim: Some("ns/c".into()),
            ..Default::default()
        }),
        namespace: Some(NamespaceFacts {
            phase: Some("Active".into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn every_cluster_fact_exists_in_the_facts_serialization() {
    let facts = serde_json::to_value(full_facts()).expect("facts serialize");
    let root = serde_json::json!({ "facts": facts });
    for fact in FACTS.iter().filter(|f| f.group().is_some()) {
        let mut node = &root;
        for segment in fact.context_path() {
            node = node
                .get(segment)
                .unwrap_or_else(|| panic!("fact {} missing at {segment}", fact.name));
        }
        assert!(
            !node.is_null(),
            "fact {} is null in a full Facts",
            fact.name
        );
    }
}

/// The reverse direction: a field added to `Facts` must be added here
/// (and to docs/policies.md) before policies can name it.
#[test]
fn every_facts_field_is_in_the_catalog() {
    let facts = serde_json::to_value(full_facts()).expect("facts serialize");
    let mut names = Vec::new();
    for (group, value) in facts.as_object().into_iter().flatten() {
        if group == "unknown" {
            continue;
        }
        names.push(group.clone());
        for (field, inner) in value.as_object().into_iter().flatten() {
            names.push(format!("{group}.{field}"));
            if group == "owners" {
                for nested in inner.as_object().into_iter().flatten().map(|(k, _)| k) {
                    names.push(format!("{group}.{field}.{nested}"));
                }
            }
        }
    }
    for name in names {
        assert!(
            lookup(&name).is_some(),
            "Facts field {name} is not in the catalog"
        );
    }
}

#[test]
fn every_group_is_a_facts_field() {
    let facts = serde_json::to_value(full_facts()).expect("facts serialize");
    for group in GROUPS {
        assert!(facts.get(group).is_some(), "group {group} not in Facts");
    }
    for fact in FACTS {
        if let Some(group) = fact.group() {
            assert!(GROUPS.contains(&group), "{} has unknown group", fact.name);
        }
    }
}

#[test]
fn request_facts_have_no_group() {
    assert_eq!(lookup("intent.type").and_then(FactSpec::group), None);
    assert_eq!(
        lookup("node.ready").map(FactSpec::context_path),
        Some(vec!["facts", "node", "ready"])
    );
}

#[test]
fn docs_list_every_fact() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policies.md");
    let docs = std::fs::read_to_string(path).expect("docs/policies.md");
    for fact in FACTS {
        assert!(
            docs.contains(&format!("| `{}` |", fact.name)),
            "docs/policies.md does not document fact {}",
            fact.name
        );
    }
}

#[test]
fn suggests_near_misses_only() {
    assert_eq!(suggest("node.redy"), Some("node.ready"));
    assert_eq!(suggest("completely.different.thing"), None);
}

#[test]
fn normalizes_group_spellings() {
    assert_eq!(normalize_group("persistent_volume"), "persistentvolume");
    assert_eq!(normalize_group("persistentVolume"), "persistentvolume");
}
