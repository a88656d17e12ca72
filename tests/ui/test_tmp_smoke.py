import time
from tests.ui.conftest import seed, rest

def test_smoke(base_url, alpha, ui, artifacts):
    t=time.time(); s = seed(base_url, alpha, extra_facts=10); print("seed", time.time()-t)
    print(rest(base_url, alpha, "queries/summary", days=30)["totals"])
    t=time.time()
    ui.login(base_url, "alpha", alpha.token)
    ui.ready("overview")
    print("load", time.time()-t)
    ui.page.screenshot(path=str(artifacts/"tmp.png"), full_page=True)
    msgs=[]
    print(ui.requests)
