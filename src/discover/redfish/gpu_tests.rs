//! GPUs as vendors describe them: the model where the processor names none.

use serde_json::json;

use super::quirk_tests::{coll, run, sys};

/// Lenovo XCC: GPU processors with `Model` null name their card only on the linked PCIe
/// device (`Name` `NVIDIA L40`, `Model` `N/A`); a GPU that names its model keeps it, and a
/// link to a device that does not answer leaves the model unknown.
#[test]
fn a_gpu_without_a_model_takes_its_linked_pcie_device_name() {
    let gpu = |dev: &str| {
        json!({"ProcessorType": "GPU", "Model": null, "Status": {"State": null},
               "Manufacturer": "NVIDIA Corporation",
               "Links": {"PCIeDevice": {"@odata.id": dev}}})
    };
    let (nodes, _, _) = run(vec![
        (
            "/redfish/v1/Systems/1",
            sys(json!({"Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors"}})),
        ),
        (
            "/redfish/v1/Systems/1/Processors",
            coll(&["/p/1", "/p/g1", "/p/g2", "/p/g3", "/p/g4"]),
        ),
        (
            "/p/1",
            json!({"ProcessorType": "CPU", "TotalCores": 32, "TotalThreads": 64}),
        ),
        ("/p/g1", gpu("/redfish/v1/Chassis/1/PCIeDevices/slot_3")),
        ("/p/g2", gpu("/redfish/v1/Chassis/1/PCIeDevices/slot_4")),
        (
            "/p/g3",
            json!({"ProcessorType": "GPU", "Model": "NVIDIA H100 PCIe",
                   "Links": {"PCIeDevice": {"@odata.id": "/redfish/v1/Chassis/1/PCIeDevices/slot_3"}}}),
        ),
        ("/p/g4", gpu("/redfish/v1/Chassis/1/PCIeDevices/gone")),
        (
            "/redfish/v1/Chassis/1/PCIeDevices/slot_3",
            json!({"@odata.id": "/redfish/v1/Chassis/1/PCIeDevices/slot_3",
                   "Name": "NVIDIA L40", "Model": "N/A"}),
        ),
        (
            "/redfish/v1/Chassis/1/PCIeDevices/slot_4",
            json!({"@odata.id": "/redfish/v1/Chassis/1/PCIeDevices/slot_4",
                   "Name": "PCIe slot 4", "Model": "NVIDIA A16"}),
        ),
    ]);
    let models: Vec<Option<&str>> = nodes[0].gpus.iter().map(|g| g.model.as_deref()).collect();
    assert_eq!(
        models,
        [
            Some("NVIDIA L40"),
            Some("NVIDIA A16"),
            Some("NVIDIA H100 PCIe"),
            None
        ]
    );
}
