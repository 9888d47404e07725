"""Build the whole CDK app from config/: one pipeline per branch (or only the one ``-c branch=``
selects), a stand-alone stage for any environment without a branch, cdk-nag over everything."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from infrastructure.access.lake_formation import shared_lake_formation
from infrastructure.assets import BuiltAssets, glue_artifacts, lambda_code
from infrastructure.nag import AUDIT_CONTEXT, CountingNagPlugin
from infrastructure.pipeline import BRANCH_CONTEXT, PipelineStack
from infrastructure.stage import OdpStage
from odp.config.loader import ConfigError, OdpConfig, load_config
from odp.config.views import check_views

REPO_ROOT = Path(__file__).resolve().parents[1]
ASSET_CACHE = REPO_ROOT / ".cache" / "assets"


# What the CDK CLI adds to the context of every synth (resource path metadata: cfn-lint reads it to
# recognise CDK templates).
CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True, "aws:cdk:enable-asset-metadata": True}


def cdk_json_context(root: Path = REPO_ROOT) -> dict[str, Any]:
    """cdk.json's feature flags plus the CLI's defaults, so an in-process App (tests, bench) matches
    ``cdk synth``."""
    return {**CLI_CONTEXT, **json.loads((root / "cdk.json").read_text(encoding="utf-8")).get("context", {})}


def new_app(context: dict[str, Any] | None = None, outdir: str | None = None) -> App:
    """An App without CDK's built-in CloudFormation validation plugin: cfn-lint (pinned, run over every
    template by tests/infra) covers it, and the plugin alone took ~24 s of a 30 s synth."""
    return App(context=context, outdir=outdir, builtin_cloud_formation_validation=False)


def selected_environments(config: OdpConfig, branch: str | None) -> list[str]:
    """Environments to synthesize: all, or the one whose branch is ``branch``.

    Raises:
        ValueError: no environment deploys from ``branch``.
    """
    environments = config.environments.environments
    if branch is None:
        return list(environments)
    chosen = [name for name, env in environments.items() if env.branch == branch]
    if not chosen:
        known = ", ".join(sorted(env.branch for env in environments.values() if env.branch))
        raise ValueError(f"no environment deploys from branch {branch!r} (branches: {known})")
    return chosen


def build_app(app: App | None = None, *, config_dir: Path = REPO_ROOT / "config", outdir: str | None = None) -> App:
    """Compose the app; the caller synthesizes it. cdk-nag runs at synth unless the app's context sets
    ``infrastructure.nag.AUDIT_CONTEXT`` (then acknowledgments are recorded, not made: see nag.py).

    Raises:
        odp.config.loader.ConfigError: the configuration is invalid.
        ValueError: ``-c branch=`` names a branch no environment deploys from, or two environments with
            consumers share an account and region (``lake_formation.shared_lake_formation``).
    """
    if app is None:
        app = new_app(context=cdk_json_context(), outdir=outdir)
    config = load_config(config_dir)
    branch = app.node.try_get_context(BRANCH_CONTEXT)
    shared = shared_lake_formation(config.environments.environments, config.access)
    if shared:
        raise ValueError("\n".join(shared))
    views, issues = check_views(config_dir, config)  # config/views/*.sql, deployed with the consumer side
    if issues:
        raise ConfigError(issues)
    assets = BuiltAssets(
        lambda_code=lambda_code(REPO_ROOT, ASSET_CACHE), glue=glue_artifacts(REPO_ROOT, ASSET_CACHE), views=tuple(views)
    )
    for name in selected_environments(config, branch):
        if config.environments.environments[name].branch:
            PipelineStack(app, f"odp-{name}-pipeline", name=name, config=config, assets=assets)
        else:
            OdpStage(app, f"odp-{name}", name=name, config=config, assets=assets)
    if not app.node.try_get_context(AUDIT_CONTEXT):
        app.odp_nag = CountingNagPlugin(AwsSolutionsChecks(app))  # tests read its run count
        Validations.of(app).add_plugins(app.odp_nag)
    return app
