"""Network: a VPC without NAT, endpoints for every AWS API the jobs call from it, flow logs, and the
self-referencing security group plus Glue NETWORK connection that puts Glue inside the VPC.

Which endpoints exist follows from the jobs that need them (tests/infra/permissions/reachability.py
proves every recorded call of a principal in the VPC has one): the always-present ones below, SNS when
datasets are configured (the dataset job publishes its run notifications) and Kinesis Data Streams when
a stream is configured (the streaming job's Kinesis source, read by Glue's connector inside the VPC)."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_glue as glue
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from odp.naming import resource_prefix

INTERFACE_ENDPOINTS = {
    "Glue": ec2.InterfaceVpcEndpointAwsService.GLUE,
    "Kms": ec2.InterfaceVpcEndpointAwsService.KMS,
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "Monitoring": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
    "Sts": ec2.InterfaceVpcEndpointAwsService.STS,
}
# Only the Glue jobs run in the VPC (the Lambdas do not): they call S3 and DynamoDB (gateway endpoints),
# Glue, KMS, CloudWatch Logs and metrics, and STS. An interface endpoint nothing uses costs every hour,
# so the two below exist only when a job that calls them is configured.
SNS_ENDPOINT = ("Sns", ec2.InterfaceVpcEndpointAwsService.SNS)  # the dataset job's notifications
KINESIS_ENDPOINT = ("KinesisStreams", ec2.InterfaceVpcEndpointAwsService.KINESIS_STREAMS)  # a stream's source
# Lake Formation on (access.yaml names consumers): the jobs' lakeformation:GetDataAccess
LAKE_FORMATION_ENDPOINT = ("LakeFormation", ec2.InterfaceVpcEndpointAwsService.LAKE_FORMATION)
# A cadence or dataset on EMR Serverless: its jobs ask emr-serverless:GetJobRun whether a lease's holder ended
EMR_SERVERLESS_ENDPOINT = ("EmrServerless", ec2.InterfaceVpcEndpointAwsService.EMR_SERVERLESS)


@dataclass(frozen=True)
class NetworkProps:
    """What the Network of one environment is built from.

    Attributes:
    environment: environment name (physical names: the Glue connections ``odp-<env>-vpc[-2]``).
    cidr: the VPC's CIDR block from config (``vpc_cidr``); /16 to /22 leaves room for two /20 subnets.
    log_key: KMS key of the flow-log group.
    availability_zones: the two AZs of the subnets, from config (``availability_zones``); default (empty):
        the stack's own (``Fn::GetAZs`` on an environment-agnostic stack, as in the construct tests).
    sns_endpoint: an SNS interface endpoint (datasets configured: the dataset job publishes); default False.
    kinesis_endpoint: a Kinesis Data Streams interface endpoint (a stream configured); default False.
    lake_formation_endpoint: a Lake Formation interface endpoint (Lake Formation on); default False.
    emr_serverless_endpoint: an EMR Serverless interface endpoint (a cadence on EMR Serverless); default False.
    removal_policy: what happens to the flow-log group when the stack goes; default RETAIN.
    log_retention: flow-log retention; default one month.
    """

    environment: str
    cidr: str
    log_key: kms.IKey
    availability_zones: tuple[str, ...] = ()
    sns_endpoint: bool = False
    kinesis_endpoint: bool = False
    lake_formation_endpoint: bool = False
    emr_serverless_endpoint: bool = False
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    log_retention: logs.RetentionDays = logs.RetentionDays.ONE_MONTH


class Network(Construct):
    """VPC over two AZs with isolated subnets only (no NAT: data never needs the internet)."""

    def __init__(self, scope: Construct, construct_id: str, props: NetworkProps) -> None:
        super().__init__(scope, construct_id)
        environment, cidr = props.environment, props.cidr
        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(cidr),
            availability_zones=list(props.availability_zones) or Stack.of(self).availability_zones[:2],
            nat_gateways=0,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED, cidr_mask=20)
            ],
            gateway_endpoints={
                "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3),
                "DynamoDb": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.DYNAMODB),
            },
            # CDK's custom resource removes every rule of the default security group (CIS 5.4): nothing
            # may join it by accident and talk to the jobs.
            restrict_default_security_group=True,
        )
        flow_log_group = logs.LogGroup(
            self,
            "FlowLogs",
            encryption_key=props.log_key,
            retention=props.log_retention,
            removal_policy=props.removal_policy,
        )
        self.vpc.add_flow_log("FlowLog", destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group))

        self.security_group = ec2.SecurityGroup(
            self,
            "GlueSecurityGroup",
            vpc=self.vpc,
            description="ODP Glue jobs: self-referencing (Spark driver and executors) plus HTTPS to endpoints",
            allow_all_outbound=False,
        )
        self.security_group.add_ingress_rule(self.security_group, ec2.Port.all_tcp(), "Spark between Glue workers")
        self.security_group.add_egress_rule(self.security_group, ec2.Port.all_tcp(), "Spark between Glue workers")
        # The subnets are isolated (no route to the internet): port 443 reaches only the interface
        # endpoints and the S3 / DynamoDB gateway endpoints, whose addresses are AWS prefix lists.
        self.security_group.add_egress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(443), "HTTPS to the VPC endpoints")

        endpoint_group = ec2.SecurityGroup(
            self,
            "EndpointSecurityGroup",
            vpc=self.vpc,
            description="ODP interface endpoints: HTTPS from inside the VPC",
            allow_all_outbound=False,
        )
        endpoint_group.add_ingress_rule(ec2.Peer.ipv4(cidr), ec2.Port.tcp(443), "HTTPS from the VPC")
        for name, service in interface_endpoints(props).items():
            self.vpc.add_interface_endpoint(
                f"{name}Endpoint",
                service=service,
                private_dns_enabled=True,
                security_groups=[endpoint_group],
                open=False,  # the group above already admits HTTPS from the VPC CIDR
            )

        # A Glue NETWORK connection names one subnet; a job lists one connection per subnet and Glue moves
        # to the next when the first one's AZ or IP addresses fail. Each AZ comes from its subnet (GetAtt).
        self.glue_connection_names: list[str] = []
        self.glue_connections: list[glue.CfnConnection] = []
        for index, subnet in enumerate(self.vpc.isolated_subnets):
            connection_name = glue_connection_name(environment, index)
            cfn_subnet = subnet.node.default_child
            self.glue_connections.append(
                glue.CfnConnection(
                    self,
                    "GlueConnection" if index == 0 else f"GlueConnection{index}",
                    catalog_id=Stack.of(self).account,
                    connection_input=glue.CfnConnection.ConnectionInputProperty(
                        name=connection_name,
                        connection_type="NETWORK",
                        description=f"Runs the ODP Glue jobs inside the VPC (subnet {index + 1})",
                        connection_properties={},
                        physical_connection_requirements=glue.CfnConnection.PhysicalConnectionRequirementsProperty(
                            availability_zone=cfn_subnet.attr_availability_zone,
                            subnet_id=subnet.subnet_id,
                            security_group_id_list=[self.security_group.security_group_id],
                        ),
                    ),
                )
            )
            self.glue_connection_names.append(connection_name)


def interface_endpoints(props: NetworkProps) -> dict[str, ec2.InterfaceVpcEndpointAwsService]:
    """The interface endpoints of a network with these props: the five every job needs, then SNS, Kinesis
    Data Streams, Lake Formation and EMR Serverless when the props ask for them."""
    optional = [
        (SNS_ENDPOINT, props.sns_endpoint),
        (KINESIS_ENDPOINT, props.kinesis_endpoint),
        (LAKE_FORMATION_ENDPOINT, props.lake_formation_endpoint),
        (EMR_SERVERLESS_ENDPOINT, props.emr_serverless_endpoint),
    ]
    return {**INTERFACE_ENDPOINTS, **{name: service for (name, service), wanted in optional if wanted}}


def glue_connection_name(environment: str, index: int) -> str:
    """``odp-<env>-vpc`` for the first subnet, ``odp-<env>-vpc-<n>`` for the n-th (1-based) after it."""
    return f"{resource_prefix(environment)}-vpc" + (f"-{index + 1}" if index else "")
