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

/// HPE iLO lists GPUs only in its Oem `PCIDevices`: display controllers of a GPU vendor in
/// a slot count, with their `Name` as model; the embedded video, switches and other
/// vendors do not. With GPU processors present, the Oem list is not read.
#[test]
fn hpe_gpus_come_from_its_oem_pci_devices() {
    let devices = |gpu_processor: bool| {
        let mut docs = vec![
            (
                "/redfish/v1/Systems/1",
                sys(json!({
                    "Processors": {"@odata.id": "/redfish/v1/Systems/1/Processors"},
                    "Oem": {"Hpe": {"Links": {"PCIDevices": {"@odata.id": "/redfish/v1/Systems/1/PCIDevices/"}}}}
                })),
            ),
            (
                "/redfish/v1/Systems/1/Processors",
                coll(if gpu_processor {
                    &["/p/1", "/p/g"]
                } else {
                    &["/p/1"]
                }),
            ),
            (
                "/p/1",
                json!({"ProcessorType": "CPU", "TotalCores": 64, "TotalThreads": 128}),
            ),
            (
                "/p/g",
                json!({"ProcessorType": "GPU", "Model": "NVIDIA L4"}),
            ),
            (
                "/redfish/v1/Systems/1/PCIDevices",
                coll(&["/d/1", "/d/2", "/d/3", "/d/4", "/d/5"]),
            ),
            (
                "/d/1",
                json!({"Name": "Embedded Video Controller", "ClassCode": 3, "VendorID": 4139, "StructuredName": "PCI.Emb.1.1"}),
            ),
            (
                "/d/2",
                json!({"Name": "NVIDIA A100-SXM4-40GB", "ClassCode": 3, "VendorID": 4318, "StructuredName": "PCI.Slot.4.2"}),
            ),
            (
                "/d/3",
                json!({"Name": "NVIDIA NV Switch", "ClassCode": 6, "VendorID": 4318, "StructuredName": "PCI.Slot.9.3"}),
            ),
            (
                "/d/4",
                json!({"Name": "NVIDIA A100-SXM4-40GB", "ClassCode": 3, "VendorID": 4318, "StructuredName": "PCI.Slot.5.2"}),
            ),
            (
                "/d/5",
                json!({"Name": "Network Controller", "ClassCode": 2, "VendorID": 5555}),
            ),
        ];
        if !gpu_processor {
            docs.retain(|(path, _)| *path != "/p/g");
        }
        let (nodes, _, _) = run(docs);
        nodes[0]
            .gpus
            .iter()
            .map(|g| (g.model.clone(), g.manufacturer.clone()))
            .collect::<Vec<_>>()
    };
    let a100 = (
        Some("NVIDIA A100-SXM4-40GB".to_string()),
        Some("NVIDIA".to_string()),
    );
    assert_eq!(devices(false), vec![a100.clone(), a100]);
    assert_eq!(devices(true), vec![(Some("NVIDIA L4".to_string()), None)]);
}
