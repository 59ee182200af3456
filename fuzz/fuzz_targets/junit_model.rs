//! Structure-aware JUnit: well-formed reports of records with random names and outcomes,
//! checked against a simple model: the reader sees every record, with its outcome, and the
//! counts agree with them.
#![no_main]
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use merge_guard::evidence::record::Outcome;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Kind {
    Pass,
    Fail,
    Error,
    Skip,
}

#[derive(Arbitrary, Debug)]
struct Record {
    class: u8,
    name: u8,
    kind: Kind,
}

fuzz_target!(|records: Vec<Record>| {
    let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"s\">");
    for r in &records {
        let child = match r.kind {
            Kind::Pass => "",
            Kind::Fail => "<failure message=\"m\">x</failure>",
            Kind::Error => "<error message=\"m\">x</error>",
            Kind::Skip => "<skipped message=\"m\"/>",
        };
        xml.push_str(&format!(
            "<testcase classname=\"pkg.c{}\" name=\"t{}\" time=\"0.1\">{child}</testcase>",
            r.class % 8,
            r.name
        ));
    }
    xml.push_str("</testsuite></testsuites>");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("junit.xml");
    std::fs::write(&path, &xml).unwrap();
    let mut seen = Vec::new();
    let file = merge_guard::evidence::junit::read_junit(&path, &mut |case| {
        seen.push((case.classname.clone(), case.name.clone(), case.outcome))
    })
    .expect("a well-formed report reads");
    assert_eq!(file.counts.cases, records.len() as u64);
    // Records back to back with the same id may be read as a rerun's attempts (one record);
    // apart from that every record is seen, in order, with its outcome.
    let mut model: Vec<(String, String, Outcome)> = Vec::new();
    for r in &records {
        let outcome = match r.kind {
            Kind::Pass => Outcome::Passed,
            Kind::Fail => Outcome::Failed,
            Kind::Error => Outcome::Errored,
            Kind::Skip => Outcome::Skipped,
        };
        model.push((
            format!("pkg.c{}", r.class % 8),
            format!("t{}", r.name),
            outcome,
        ));
    }
    let c = file.counts;
    assert_eq!(
        c.passed + c.failed + c.errors + c.skipped,
        seen.len() as u64,
        "outcome counts add up to the records read"
    );
    if seen.len() == model.len() {
        assert_eq!(seen, model);
    } else {
        assert!(seen.len() < model.len());
        // Every id seen is one of the model's, in order.
        let mut it = model.iter();
        for s in &seen {
            assert!(it.any(|m| m.0 == s.0 && m.1 == s.1), "{s:?} not in order");
        }
    }
});
