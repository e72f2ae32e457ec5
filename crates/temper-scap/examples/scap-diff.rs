fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let x = temper_scap::read_benchmark(&a[0], Some(&a[2])).unwrap();
    let y = temper_scap::read_benchmark(&a[1], Some(&a[2])).unwrap();
    println!("{} vs {}", x.selected_rules.len(), y.selected_rules.len());
    for (r, s) in x.selected_rules.iter().zip(&y.selected_rules) {
        let (jr, js) = (serde_json::to_value(r).unwrap(), serde_json::to_value(s).unwrap());
        for (k, v) in jr.as_object().unwrap() {
            if &js[k] != v { println!("{} {k}: 
{}
---
{}", r.id, v.to_string(), js[k].to_string()); }
        }
    }
}
