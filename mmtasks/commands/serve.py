"""``mmtasks serve``: the HTTP evaluation server (:mod:`mmtasks.integrations.server`)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def add_serve_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    p = sub.add_parser(
        "serve", help="an HTTP evaluation server: jobs (a checkpoint or a served endpoint, tasks) in, results out",
        description="Serve evaluations over HTTP: POST /v1/jobs with {tasks, model, model_args, limit, ...} (model: "
                    "hf:/path/to/checkpoint, vllm:..., or a served endpoint, openai:NAME with model_args.base_url), "
                    "GET /v1/jobs/ID for its status and results (results.json's object), GET /v1/health. Jobs run one "
                    "at a time; each writes OUTPUT_ROOT/ID. From Python: mmtasks.integrations.server.EvalClient.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument("--data-dir", type=Path, default=None, metavar="DIR", help="benchmark data root of every job "
                   "(default: $MMTASKS_DATA_DIR)")
    p.add_argument("--output-root", type=Path, required=True, metavar="DIR", help="each job writes DIR/<job id>")
    p.add_argument("--include-path", action="append", type=Path, default=[], metavar="DIR", help="extra folder of task YAML (repeatable)")
    p.add_argument("--token-env", default=None, metavar="VAR",
                   help="require 'Authorization: Bearer <token>' with the token in this environment variable")
    return p


def serve_command(args: argparse.Namespace) -> int:
    from mmtasks.errors import ConfigError
    from mmtasks.integrations.server import EvalServer, start
    from mmtasks.secrets import register_secret

    token = None
    if args.token_env:
        token = os.environ.get(args.token_env)
        if not token:
            raise ConfigError(f"environment variable {args.token_env} is not set", field="--token-env")
        register_secret(token)
    server = EvalServer(data_dir=args.data_dir, output_root=args.output_root, include_paths=args.include_path, token=token)
    httpd, _ = start(server, args.host, args.port)
    host, port = str(httpd.server_address[0]), int(httpd.server_address[1])
    print(f"mmtasks serve: listening on http://{host}:{port} (jobs write {args.output_root}); Ctrl-C stops", flush=True)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
        server.queue.put(None)
    return 0
