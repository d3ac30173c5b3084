async def test_health_reports_backend_model_reranker_documents_and_versions(client):
    body = (await client.get("/api/health")).json()
    assert body["backend"] == "fake" and body["model"] == "scripted-fake"
    assert body["reranker"] == "none"
    assert body["documents"] == 3 and body["chunks"] >= 3
    assert body["versions"]["langgraph"] and body["versions"]["fastapi"]
