"""Pipeline-config import service."""
import base64
import json
import pickle

import yaml
from fastapi import FastAPI, HTTPException, Request, UploadFile
from pydantic import BaseModel

app = FastAPI(title="pipeline-importer")

PIPELINES: dict[str, dict] = {}


class ImportResult(BaseModel):
    name: str
    steps: int


def _validate(config: dict) -> dict:
    if not isinstance(config, dict) or "name" not in config:
        raise HTTPException(status_code=422, detail="config needs a name")
    if not isinstance(config.get("steps"), list):
        raise HTTPException(status_code=422, detail="steps must be a list")
    return config


@app.post("/pipelines/yaml", response_model=ImportResult)
async def import_yaml(file: UploadFile):
    raw = await file.read()
    config = _validate(yaml.load(raw, Loader=yaml.Loader))
    PIPELINES[config["name"]] = config
    return ImportResult(name=config["name"], steps=len(config["steps"]))


@app.post("/pipelines/defaults", response_model=ImportResult)
async def import_defaults():
    with open("defaults.yaml", "rb") as fh:
        config = _validate(yaml.safe_load(fh))
    PIPELINES[config["name"]] = config
    return ImportResult(name=config["name"], steps=len(config["steps"]))


@app.post("/pipelines/json", response_model=ImportResult)
async def import_json(request: Request):
    config = _validate(json.loads(await request.body()))
    PIPELINES[config["name"]] = config
    return ImportResult(name=config["name"], steps=len(config["steps"]))


@app.post("/pipelines/snapshot")
async def restore_snapshot(request: Request):
    payload = await request.json()
    blob = base64.b64decode(payload["snapshot"])
    restored = pickle.loads(blob)
    PIPELINES.update(restored)
    return {"restored": sorted(restored)}


@app.get("/pipelines/{name}")
async def get_pipeline(name: str):
    if name not in PIPELINES:
        raise HTTPException(status_code=404, detail="unknown pipeline")
    return PIPELINES[name]
