"""Bad query parameters are 400 with the JSON error body (never 422); the bounds themselves are 200."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.conftest import ProfileAccess

# Python's int() and pydantic's lax parsing take most of these as numbers; a parameter is digits only.
NOT_DIGITS = ["5.0", "1_0", "+5", "%205", "5%20", "%D9%A5", "0x5", "05", "050", "00"]  # and no leading zero
BAD_LIMITS = ["0", "-1", "501", "abc", "1.5", "", "1e3", *NOT_DIGITS]
BAD_DAYS = ["0", "366", "-1", "x", "2.5", "", *NOT_DIGITS]


@pytest.mark.parametrize("value", BAD_LIMITS)
def test_query_listing_limit_out_of_range(client: TestClient, alpha: ProfileAccess, value: str) -> None:
    response = client.get(f"/api/alpha/queries?limit={value}", headers=alpha.headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["status"] == 400 and error["code"] == "invalid_parameter" and error["param"] == "limit"
    assert error["message"]


@pytest.mark.parametrize("path", ["/api/alpha/queries/summary", "/api/alpha/stats"])
@pytest.mark.parametrize("value", BAD_DAYS)
def test_days_out_of_range(client: TestClient, alpha: ProfileAccess, path: str, value: str) -> None:
    response = client.get(f"{path}?days={value}", headers=alpha.headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "days"


@pytest.mark.parametrize("value", ["1", "500", "50"])
def test_limit_bounds_are_accepted(client: TestClient, alpha: ProfileAccess, value: str) -> None:
    response = client.get(f"/api/alpha/queries?limit={value}", headers=alpha.headers)
    assert response.status_code == 200
    assert response.json() == {"profile": "alpha", "queries": []}


@pytest.mark.parametrize("path", ["/api/alpha/queries/summary", "/api/alpha/stats"])
@pytest.mark.parametrize("value", ["1", "365"])
def test_days_bounds_are_accepted(client: TestClient, alpha: ProfileAccess, path: str, value: str) -> None:
    response = client.get(f"{path}?days={value}", headers=alpha.headers)
    assert response.status_code == 200
    assert response.json()["days"] == int(value)
    assert len(response.json()["daily"]) == int(value)


@pytest.mark.parametrize(
    "query", ["status=deleted", "kind=opinion", "limit=0", "limit=201", "cursor=%%%", "tag=Not%20A%20Tag",
              "limit=5.0", "limit=1_0"]
)
def test_fact_listing_rejects_bad_filters(client: TestClient, alpha: ProfileAccess, query: str) -> None:
    response = client.get(f"/api/alpha/facts?{query}", headers=alpha.headers)
    assert response.status_code == 400, response.text


def test_openapi_documents_400_and_401_and_no_422(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    queries = schema["paths"]["/api/{profile}/queries"]["get"]
    assert {"400", "401"} <= set(queries["responses"])
    assert "422" not in str(schema["paths"])
    limit = next(p for p in queries["parameters"] if p["name"] == "limit")
    assert limit["schema"]["minimum"] == 1 and limit["schema"]["maximum"] == 500
    for path in ("/api/{profile}/queries/summary", "/api/{profile}/stats", "/api/{profile}/queries/{query_id}",
                 "/api/{profile}/facts", "/api/{profile}/facts/{uid}", "/api/profiles"):
        assert "401" in schema["paths"][path]["get"]["responses"], path


@pytest.mark.parametrize("value", ["9223372036854775808", "99999999999999999999999", "0", "-1", "1_0", "+1", "1.0"])
def test_query_ids_past_the_database_range_are_400(client: TestClient, alpha: ProfileAccess, value: str) -> None:
    response = client.get(f"/api/alpha/queries/{value}", headers=alpha.headers)
    assert response.status_code == 400 and response.json()["error"]["param"] == "query_id"
    missing = client.get("/api/alpha/queries/2147483647", headers=alpha.headers)
    assert missing.status_code == 404 and missing.json()["error"]["param"] == "query_id"  # the path's own name
    assert client.get("/api/alpha/queries/2147483648", headers=alpha.headers).status_code == 400


@pytest.mark.parametrize("decoded", ["f:9223372036854775808", "f:2147483648", "f:0", "f:١٢", "x:1"])
def test_cursors_that_decode_past_the_database_range_are_400(client: TestClient, alpha: ProfileAccess,
                                                            decoded: str) -> None:
    import base64

    cursor = base64.urlsafe_b64encode(decoded.encode()).decode().rstrip("=")
    response = client.get(f"/api/alpha/facts?cursor={cursor}", headers=alpha.headers)
    assert response.status_code == 400 and response.json()["error"]["param"] == "cursor"


@pytest.mark.parametrize("value", ["0.4", "1.5", "-0.6", "abc", "", "0.5_0", "+0.6", "%200.6", "nan", "inf", "0x1"])
def test_duplicates_threshold_out_of_range_or_not_a_number(client: TestClient, alpha: ProfileAccess,
                                                           value: str) -> None:
    response = client.get(f"/api/alpha/duplicates?threshold={value}", headers=alpha.headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "threshold"


@pytest.mark.parametrize("value", ["0.5", "1", "0.75", "7.5e-1", ".9"])
def test_duplicates_threshold_in_range_is_accepted(client: TestClient, alpha: ProfileAccess, value: str) -> None:
    response = client.get(f"/api/alpha/duplicates?threshold={value}", headers=alpha.headers)
    assert response.status_code == 200, response.text
    assert response.json()["threshold"] == float(value)


@pytest.mark.parametrize("path", ["/api/alpha/queries?limit=5&limit=6", "/api/alpha/stats?days=7&days=7",
                                  "/api/alpha/facts?kind=user&kind=project",
                                  "/api/alpha/queries/summary?days=3&days=3"])
def test_a_parameter_given_twice_is_400_naming_it(client: TestClient, alpha: ProfileAccess, path: str) -> None:
    response = client.get(path, headers=alpha.headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_parameter" and "more than once" in error["message"]
    assert error["param"] == path.split("?")[1].split("=")[0]


def test_a_parameter_given_twice_without_a_token_is_still_401(client: TestClient) -> None:
    assert client.get("/api/alpha/queries?limit=5&limit=6").status_code == 401


@pytest.mark.parametrize(("path", "name", "takes"), [
    ("/api/alpha/queries/summary?day=7", "day", "takes days"),
    ("/api/alpha/queries?LIMIT=5", "LIMIT", "takes limit"),
    ("/api/alpha/stats?days=7&foo=bar", "foo", "takes days"),
    ("/api/alpha/queries?limit[]=5", "limit[]", "takes limit"),
    ("/api/alpha/facts?statuss=active", "statuss", "as_of, cursor, kind, limit, order, recalled, since, status, tag, until"),
    ("/api/profiles?x=1", "x", "takes no query parameters"),
])
def test_an_unknown_parameter_is_400_naming_it_and_what_the_endpoint_takes(
        client: TestClient, alpha: ProfileAccess, path: str, name: str, takes: str) -> None:
    """A misspelt parameter would be passed over and the default answered (30 days for `?day=7`)."""
    response = client.get(path, headers=alpha.headers)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["param"] == name and f"unknown query parameter {name!r}" in error["message"], error
    assert takes in error["message"]
    assert client.get(path).status_code == 401  # no token: the same 401 as always


@pytest.mark.parametrize("written", ["01", "+1", "1.0", "1_0", "%201"])
def test_an_id_in_the_path_is_written_plainly(client: TestClient, alpha: ProfileAccess, written: str) -> None:
    """Issue 57: /queries/01 answered query 1. An id is digits without a leading zero; anything else is the 400
    naming the parameter, as for the query string's numbers."""
    assert client.get("/api/alpha/queries/1", headers=alpha.headers).status_code == 404  # no such query: read as 1
    response = client.get(f"/api/alpha/queries/{written}", headers=alpha.headers)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "query_id"
