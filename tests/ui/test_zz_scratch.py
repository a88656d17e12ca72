from tests.ui.conftest import seed

def test_scratch(base_url, seeded, page_factory):
    ui = page_factory(viewport={"width": 390, "height": 844}, device_scale_factor=1, is_mobile=True, has_touch=True)
    ui.login(base_url, "alpha", seeded.access.token); ui.ready("overview")
    p = ui.page
    p.screenshot(path="/tmp/uitry/p1.png")
    p.mouse.wheel(0, 1400); p.wait_for_timeout(200); p.screenshot(path="/tmp/uitry/p2.png")
    p.evaluate("window.scrollTo(0, document.body.scrollHeight)"); p.wait_for_timeout(200); p.screenshot(path="/tmp/uitry/p3.png")
    p.goto(f"{base_url}/ui/#/facts/{seeded.uids['db']}"); ui.ready("facts"); p.screenshot(path="/tmp/uitry/p4.png", full_page=True)
    p.goto(f"{base_url}/ui/#/queries"); ui.ready("queries"); p.screenshot(path="/tmp/uitry/p5.png")
    ui2 = page_factory()
    ui2.login(base_url, "alpha", seeded.access.token); ui2.ready("overview")
    q = ui2.page
    q.goto(f"{base_url}/ui/#/queries"); ui2.ready("queries")
    q.locator("[data-testid=query-row]").nth(1).click(); q.get_by_test_id("query-detail").wait_for()
    q.screenshot(path="/tmp/uitry/d1.png", full_page=True)
    q.goto(f"{base_url}/ui/#/facts"); ui2.ready("facts"); q.screenshot(path="/tmp/uitry/d2.png", full_page=True)
    q.goto(f"{base_url}/ui/#/facts/{seeded.uids['db_v2']}"); ui2.ready("facts"); q.screenshot(path="/tmp/uitry/d3.png", full_page=True)
    q.get_by_test_id("logout").click(); q.screenshot(path="/tmp/uitry/d4.png")
