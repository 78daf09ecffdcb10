use super::*;

#[test]
fn each_controller_is_exempt_only_for_its_own_finalizers() {
    let text = not_the_metadata_finalizer_owner();
    for pair in [
        "'system:serviceaccount:kube-system:job-controller batch.kubernetes.io/job-tracking'",
        // The shared identity may remove what each of its controllers owns.
        "'system:kube-controller-manager orphan'",
        "'system:kube-controller-manager kubernetes.io/pvc-protection'",
    ] {
        assert!(text.contains(pair), "{pair} missing from {text}");
    }
    assert!(!text.contains("'system:serviceaccount:kube-system:job-controller orphan'"));
    assert!(!text.contains("system:nodes"));
}

#[test]
fn kubelets_are_matched_by_name_and_group() {
    let text = not_the_pods_own_kubelet();
    assert!(text.contains("'system:nodes' in request.userInfo.groups"));
    assert!(text.contains("== 'system:node:' + oldObject.spec.nodeName"));
}

#[test]
fn namespace_finalize_needs_both_lists_owned() {
    let text = not_the_namespace_finalizer_owner();
    assert!(text.contains("'system:serviceaccount:kube-system:namespace-controller kubernetes'"));
    assert!(text.contains("oldObject.spec.finalizers.all("));
    assert!(text.contains("oldObject.metadata.finalizers.all("));
}
