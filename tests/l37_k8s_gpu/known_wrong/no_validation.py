"""No argument checks: right answers on valid input, but bad logs, UUIDs, minors and kinds not refused."""

MODULE = "k8s_gpu"
REJECTED_BY = {"parse_describe_node": ["correctness"], "driver_mismatch": ["correctness"], "cdi_spec": ["correctness"]}


def _check_text(name, text):
    return text if isinstance(text, str) else str(text)


def _check_resource(resource):
    return str(resource)


def _check_cdi_args(uuids, minors, kind):
    return list(uuids), [int(m) for m in minors]
