from backend.tests.conftest import SAMPLE_DOCS


async def test_health_reports_backend_model_reranker_documents_and_versions(client):
    body = (await client.get("/api/health")).json()
    assert body["backend"] == "fake" and body["model"] == "scripted-fake"
    assert body["reranker"] == "none (hybrid fusion order)"  # no FlashRank model folder in the test settings
    assert body["documents"] == len(list(SAMPLE_DOCS.iterdir())) and body["chunks"] >= body["documents"]
    assert body["versions"]["langgraph"] and body["versions"]["fastapi"]
    assert body["model_server"] is None and body["model_servers"] == []  # Ragline runs the model
