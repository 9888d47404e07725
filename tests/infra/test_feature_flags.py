"""cdk.json sets every feature flag aws-cdk-lib recommends (its package's recommended-feature-flags.json, which
`cdk init` writes into a new app) to the recommended value, except the ones docs/decisions/029 keeps, each for a
reason written there. A new aws-cdk-lib that recommends a new flag fails here until cdk.json decides it."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import aws_cdk

from tests.support.paths import REPO_ROOT

# flag -> the value cdk.json keeps instead of the recommended one (docs/decisions/029 says why).
KEPT = {
    "@aws-cdk/core:enablePartitionLiterals": False,  # 261 ARNs rewritten, 55 acknowledged findings renamed
    "@aws-cdk/aws-lambda:useCdkManagedLogGroup": False,  # an unencrypted, Retain log group per CDK-made function
}


def _recommended() -> dict[str, object]:
    (package,) = (Path(aws_cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(package) as archive:
        member = archive.extractfile("package/recommended-feature-flags.json")
        assert member is not None
        return json.load(member)


def test_cdk_json_sets_the_recommended_flags() -> None:
    context = json.loads((REPO_ROOT / "cdk.json").read_text(encoding="utf-8"))["context"]
    recommended = _recommended()
    assert len(recommended) >= 89  # aws-cdk-lib 2.275's list: a smaller one means the file was not read
    unset = sorted(flag for flag in recommended if flag not in context)
    assert unset == []
    differ = {flag: context[flag] for flag, value in recommended.items() if context[flag] != value}
    assert differ == KEPT
