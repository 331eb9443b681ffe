"""A real S3-compatible server for object-storage tests: moto's threaded server on 127.0.0.1
(a test dependency), spoken to over real HTTP by polars and boto3; no client is mocked."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

ACCESS_KEY = "testing-access-key"
SECRET_KEY = "testing-secret-9f3c1d2e7b"  # a fake: it must never appear in any output
REGION = "us-east-1"
_names = itertools.count()


@dataclass(frozen=True)
class S3Server:
    endpoint: str

    def storage_options(self) -> dict[str, str]:
        """Options for polars (and the package) to reach this server."""
        return {
            "aws_endpoint_url": self.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "aws_region": REGION,
            "aws_allow_http": "true",
        }

    def client(self):  # boto3 client, for checking what the package wrote
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )


@dataclass(frozen=True)
class Bucket:
    server: S3Server
    name: str

    @property
    def uri(self) -> str:
        return f"s3://{self.name}"

    def objects(self) -> list[str]:
        listed = self.server.client().list_objects_v2(Bucket=self.name)
        return sorted(item["Key"] for item in listed.get("Contents", []))


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    from moto.server import ThreadedMotoServer  # the test extra's moto[server]

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield S3Server(f"http://{host}:{port}")
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> Bucket:
    name = f"pairwise-test-{next(_names)}"
    s3_server.client().create_bucket(Bucket=name)
    return Bucket(s3_server, name)
