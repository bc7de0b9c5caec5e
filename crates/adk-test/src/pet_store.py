"""A small pet store on FastAPI, whose generated OpenAPI document the OpenAPI toolset tests read.

It listens on a free loopback port and prints that port as its first line of output. Deleting a
pet needs the API key `X-API-Key: pet-key`; renaming one needs `Authorization: Bearer pet-token`.
"""

import socket
import sys

import uvicorn
from fastapi import Depends, FastAPI, Header, HTTPException, Query, Response, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

app = FastAPI(title="Pet store", version="1.0.0")
api_key = APIKeyHeader(name="X-API-Key", auto_error=False)
bearer = HTTPBearer(auto_error=False)


class NewPet(BaseModel):
    name: str = Field(description="The pet's name.", min_length=1)
    tag: str | None = Field(default=None, description="A free-form tag.")


class Pet(NewPet):
    id: int


pets: dict[int, Pet] = {}


def needs_key(key: str | None = Security(api_key)) -> None:
    if key != "pet-key":
        raise HTTPException(status_code=401, detail="a valid X-API-Key is required")


def needs_token(token: HTTPAuthorizationCredentials | None = Security(bearer)) -> None:
    if token is None or token.credentials != "pet-token":
        raise HTTPException(status_code=401, detail="a valid bearer token is required")


@app.get("/pets", operation_id="listPets", summary="Lists the pets.")
def list_pets(
    limit: int = Query(default=10, ge=1, le=100, description="How many to list at most."),
    tag: list[str] | None = Query(default=None, description="Only pets with one of these tags."),
) -> list[Pet]:
    found = [pet for pet in pets.values() if tag is None or pet.tag in tag]
    return found[:limit]


@app.post("/pets", operation_id="createPet", summary="Adds a pet.", status_code=201)
def create_pet(pet: NewPet, x_request_id: str | None = Header(default=None)) -> Pet:
    created = Pet(id=len(pets) + 1, **pet.model_dump())
    pets[created.id] = created
    return created


@app.get("/pets/{pet_id}", operation_id="showPetById", summary="Shows one pet.")
def show_pet(pet_id: int) -> Pet:
    if pet_id not in pets:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")
    return pets[pet_id]


@app.patch(
    "/pets/{pet_id}",
    operation_id="renamePet",
    summary="Renames a pet.",
    dependencies=[Depends(needs_token)],
)
def rename_pet(pet_id: int, name: str = Query(min_length=1)) -> Pet:
    if pet_id not in pets:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")
    pets[pet_id].name = name
    return pets[pet_id]


@app.delete(
    "/pets/{pet_id}",
    operation_id="deletePet",
    summary="Removes a pet.",
    status_code=204,
    dependencies=[Depends(needs_key)],
)
def delete_pet(pet_id: int) -> Response:
    if pets.pop(pet_id, None) is None:
        raise HTTPException(status_code=404, detail=f"no pet {pet_id}")
    return Response(status_code=204)


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the port is printed lets the tests connect at once; connections wait in
    # the backlog until uvicorn serves them.
    sock.listen(128)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
