"""The demo RAG app (examples/rag_app.py) as an HTTP server: POST /answer {"question": ..., "query_id": ...}.

    python examples/rag_server.py --port 8000        # serves http://127.0.0.1:8000/answer until Ctrl-C

The reply is the app's JSON: {"retrieved": [{"id", "score", "text"}, ...], "answer": ..., "citations": [...]}.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rag_app import TOP_K, answer


async def ask(request: Request) -> JSONResponse:
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("question"), str):
        return JSONResponse({"error": 'POST a JSON object with a "question" string'}, status_code=400)
    return JSONResponse(answer(body["question"], body.get("query_id"), body.get("metadata"), body.get("top_k", TOP_K)))


def make_app(url: str) -> Starlette:
    """The app; it prints ``serving URL`` once it accepts requests (after the index is built)."""

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        answer("warm up the index")
        print(f"serving {url}", flush=True)
        yield

    return Starlette(routes=[Route("/answer", ask, methods=["POST"])], lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    app = make_app(f"http://{args.host}:{args.port}/answer")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
