//! The standard graph's validation and shape inference, its TOML round trip, one negative test
//! per reachable `GraphError` variant (each checking that the message names the node), and the
//! evaluator's errors on bad weights and inputs.

use superpoint_graph::reference::evaluate;
use superpoint_graph::{
    names, superpoint, superpoint_with, DType, Dim, EvalError, Graph, GraphError, Node, Op,
    SuperPointParams, Tensor, ValueType, WeightSet,
};

fn dense(channels: usize, height: usize, width: usize) -> ValueType {
    ValueType::Dense {
        dtype: DType::F32,
        channels,
        height: Dim::Known(height),
        width: Dim::Known(width),
    }
}

fn type_of(graph: &Graph, name: &str) -> ValueType {
    let types = graph.validate().expect("valid graph").types;
    let i = graph
        .nodes
        .iter()
        .position(|n| n.name == name)
        .expect("node exists");
    types[i]
}

fn node_mut<'a>(graph: &'a mut Graph, name: &str) -> &'a mut Node {
    graph
        .nodes
        .iter_mut()
        .find(|n| n.name == name)
        .expect("node exists")
}

/// Validation fails and the message names `node` in backquotes.
fn fails(graph: &Graph, node: &str) -> GraphError {
    let err = graph.validate().expect_err("graph must be rejected");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("`{node}`")),
        "message does not name `{node}`: {msg}"
    );
    err
}

fn node(name: &str, inputs: &[&str], op: Op) -> Node {
    Node {
        name: name.to_string(),
        inputs: inputs.iter().map(|s| s.to_string()).collect(),
        op,
    }
}

#[test]
fn standard_graph_shapes() {
    let g = superpoint(640, 480);
    assert_eq!(
        type_of(&g, names::INPUT),
        ValueType::Dense {
            dtype: DType::U8,
            channels: 1,
            height: Dim::Dynamic,
            width: Dim::Dynamic
        }
    );
    assert_eq!(type_of(&g, names::RESIZE), dense(1, 480, 640));
    assert_eq!(type_of(&g, "conv1b"), dense(64, 480, 640));
    assert_eq!(type_of(&g, "pool1"), dense(64, 240, 320));
    assert_eq!(type_of(&g, "pool3"), dense(128, 60, 80));
    assert_eq!(type_of(&g, "conv4b"), dense(128, 60, 80));
    assert_eq!(type_of(&g, "convPb"), dense(65, 60, 80));
    assert_eq!(type_of(&g, names::SOFTMAX), dense(65, 60, 80));
    assert_eq!(type_of(&g, names::SCORES), dense(1, 480, 640));
    assert_eq!(type_of(&g, names::NMS), dense(1, 480, 640));
    assert_eq!(type_of(&g, names::DESCRIPTORS_DENSE), dense(256, 60, 80));
    assert_eq!(type_of(&g, names::KEYPOINTS), ValueType::Keypoints);
    assert_eq!(
        type_of(&g, names::DESCRIPTORS),
        ValueType::Descriptors { dim: 256 }
    );
    assert_eq!(g.outputs, vec![names::KEYPOINTS, names::DESCRIPTORS]);
    let convs = g
        .nodes
        .iter()
        .filter(|n| matches!(n.op, Op::Conv2d { .. }))
        .count();
    assert_eq!(convs, 12);
    assert_eq!(
        type_of(&superpoint(320, 240), names::SCORES),
        dense(1, 240, 320)
    );
}

#[test]
fn toml_round_trip() {
    let params = SuperPointParams {
        frame_width: 320,
        frame_height: 240,
        nms_radius: 2,
        keypoint_threshold: 0.01,
        border: 3,
        max_keypoints: -1,
    };
    for g in [superpoint(640, 480), superpoint_with(&params)] {
        let text = g.to_toml().expect("serialises");
        assert!(text.contains("op = \"conv2d\""), "{text}");
        assert_eq!(Graph::from_toml(&text).expect("parses"), g);
    }
}

#[test]
fn toml_rejects_garbage_and_invalid_graphs() {
    assert!(matches!(
        Graph::from_toml("[[node]]\nname = 3"),
        Err(GraphError::Toml(_))
    ));
    let text = superpoint(641, 480).to_toml().expect("serialises");
    assert!(matches!(
        Graph::from_toml(&text),
        Err(GraphError::FrameNotMultiple { .. })
    ));
}

#[test]
fn empty_graph() {
    let g = Graph {
        outputs: vec![],
        nodes: vec![],
    };
    assert_eq!(g.validate(), Err(GraphError::Empty));
}

#[test]
fn input_count() {
    let mut g = superpoint(64, 64);
    g.nodes.remove(0);
    assert!(matches!(
        fails(&g, names::RESIZE),
        GraphError::InputCount { count: 0, .. }
    ));
    let mut g = superpoint(64, 64);
    g.nodes.insert(1, node("input2", &[], Op::InputPlane));
    assert!(matches!(
        fails(&g, names::INPUT),
        GraphError::InputCount { count: 2, .. }
    ));
}

#[test]
fn duplicate_name() {
    let mut g = superpoint(64, 64);
    node_mut(&mut g, "pool1").name = "conv1a".to_string();
    assert!(matches!(
        fails(&g, "conv1a"),
        GraphError::DuplicateName { .. }
    ));
}

#[test]
fn wrong_input_count() {
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::SOFTMAX)
        .inputs
        .push("convPa".to_string());
    assert!(matches!(
        fails(&g, names::SOFTMAX),
        GraphError::WrongInputCount {
            expected: 1,
            got: 2,
            ..
        }
    ));
}

#[test]
fn unknown_input() {
    let mut g = superpoint(64, 64);
    node_mut(&mut g, "conv2a").inputs[0] = "nowhere".to_string();
    assert!(matches!(
        fails(&g, "conv2a"),
        GraphError::UnknownInput { .. }
    ));
    // A node may only read nodes listed before it.
    let mut g = superpoint(64, 64);
    node_mut(&mut g, "conv1a").inputs[0] = "conv1b".to_string();
    assert!(matches!(
        fails(&g, "conv1a"),
        GraphError::UnknownInput { .. }
    ));
}

#[test]
fn unknown_output() {
    let mut g = superpoint(64, 64);
    g.outputs.push("nowhere".to_string());
    let err = g.validate().expect_err("rejected");
    assert!(matches!(err, GraphError::UnknownOutput { .. }));
    assert!(err.to_string().contains("`nowhere`"), "{err}");
}

#[test]
fn channel_mismatch() {
    let mut g = superpoint(64, 64);
    if let Op::Conv2d { in_channels, .. } = &mut node_mut(&mut g, "conv2a").op {
        *in_channels = 32;
    }
    let err = fails(&g, "conv2a");
    assert_eq!(
        err,
        GraphError::ChannelMismatch {
            node: "conv2a".to_string(),
            input: "pool1".to_string(),
            expected: 32,
            got: 64
        }
    );
    // The fold needs cell² + 1 channels.
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::SCORES).op = Op::DustbinFold { cell: 4 };
    assert!(matches!(
        fails(&g, names::SCORES),
        GraphError::ChannelMismatch {
            expected: 17,
            got: 65,
            ..
        }
    ));
    // NMS and selection need a single-channel map.
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::NMS).inputs[0] = names::SOFTMAX.to_string();
    assert!(matches!(
        fails(&g, names::NMS),
        GraphError::ChannelMismatch { expected: 1, .. }
    ));
}

#[test]
fn frame_not_multiple_of_8() {
    for (w, h) in [(641, 480), (640, 484), (0, 480)] {
        let err = fails(&superpoint(w, h), names::RESIZE);
        assert!(
            matches!(err, GraphError::FrameNotMultiple { multiple: 8, .. }),
            "{err}"
        );
    }
}

#[test]
fn radius_out_of_range() {
    let g = superpoint_with(&SuperPointParams {
        nms_radius: superpoint_graph::MAX_NMS_RADIUS + 1,
        ..SuperPointParams::default()
    });
    assert!(matches!(
        fails(&g, names::NMS),
        GraphError::RadiusOutOfRange { .. }
    ));
    let g = superpoint_with(&SuperPointParams {
        nms_radius: superpoint_graph::MAX_NMS_RADIUS,
        ..SuperPointParams::default()
    });
    assert!(g.validate().is_ok());
}

#[test]
fn type_mismatch() {
    // Descriptor sampling's second input must be keypoints.
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::DESCRIPTORS).inputs[1] = names::NMS.to_string();
    assert!(matches!(
        fails(&g, names::DESCRIPTORS),
        GraphError::TypeMismatch { .. }
    ));
    // A resize reads a u8 plane, not an f32 map.
    let mut g = superpoint(64, 64);
    g.nodes.push(node(
        "again",
        &[names::RESIZE],
        Op::Resize {
            width: 8,
            height: 8,
        },
    ));
    assert!(matches!(
        fails(&g, "again"),
        GraphError::TypeMismatch { .. }
    ));
    // A convolution reads a dense map, not keypoints.
    let mut g = superpoint(64, 64);
    node_mut(&mut g, "convDa").inputs[0] = names::KEYPOINTS.to_string();
    assert!(matches!(
        fails(&g, "convDa"),
        GraphError::TypeMismatch { .. }
    ));
}

#[test]
fn dynamic_size() {
    let mut g = superpoint(64, 64);
    node_mut(&mut g, "conv1a").inputs[0] = names::INPUT.to_string();
    assert!(matches!(
        fails(&g, "conv1a"),
        GraphError::DynamicSize { .. }
    ));
}

#[test]
fn odd_pool_input() {
    let mut nodes = vec![
        node("input", &[], Op::InputPlane),
        node(
            "resize",
            &["input"],
            Op::Resize {
                width: 8,
                height: 8,
            },
        ),
    ];
    let mut prev = "resize".to_string();
    for i in 0..4 {
        let name = format!("pool{i}");
        nodes.push(node(&name, &[&prev], Op::MaxPool2));
        prev = name;
    }
    let g = Graph {
        outputs: vec![prev],
        nodes,
    };
    // 8 -> 4 -> 2 -> 1, then 1×1 cannot be halved.
    assert!(matches!(
        fails(&g, "pool3"),
        GraphError::OddPoolInput {
            width: 1,
            height: 1,
            ..
        }
    ));
}

/// The standard graph with conv `name`'s output channels, kernel size and padding replaced.
fn with_conv(name: &str, out: usize, kernel: usize, pad: usize) -> Graph {
    let mut g = superpoint(64, 64);
    if let Op::Conv2d {
        out_channels,
        kernel: k,
        pad: p,
        ..
    } = &mut node_mut(&mut g, name).op
    {
        (*out_channels, *k, *p) = (out, kernel, pad);
    }
    g
}

#[test]
fn bad_parameters() {
    for (g, name, what) in [
        (with_conv("conv1a", 64, 2, 1), "conv1a", "kernel"),
        (with_conv("conv2b", 64, 3, 0), "conv2b", "pad"),
        (with_conv("convDb", 0, 1, 0), "convDb", "out_channels"),
    ] {
        match fails(&g, name) {
            GraphError::BadParameter { what: w, .. } => assert_eq!(w, what),
            other => panic!("{name}: {other}"),
        }
    }
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::SCORES).op = Op::DustbinFold { cell: 0 };
    assert!(matches!(
        fails(&g, names::SCORES),
        GraphError::BadParameter { what: "cell", .. }
    ));
    let mut g = superpoint(64, 64);
    node_mut(&mut g, names::DESCRIPTORS).op = Op::SampleDescriptors { cell: 0 };
    assert!(matches!(
        fails(&g, names::DESCRIPTORS),
        GraphError::BadParameter { what: "cell", .. }
    ));
}

#[test]
fn threshold_must_be_finite() {
    for t in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let g = superpoint_with(&SuperPointParams {
            keypoint_threshold: t,
            ..SuperPointParams::default()
        });
        assert!(matches!(
            fails(&g, names::KEYPOINTS),
            GraphError::BadParameter {
                what: "threshold",
                ..
            }
        ));
    }
}

#[test]
fn max_keypoints_at_least_minus_one() {
    let with = |max_keypoints| {
        superpoint_with(&SuperPointParams {
            max_keypoints,
            ..SuperPointParams::default()
        })
    };
    assert!(matches!(
        fails(&with(-2), names::KEYPOINTS),
        GraphError::BadParameter {
            what: "max_keypoints",
            ..
        }
    ));
    assert!(with(-1).validate().is_ok());
    assert!(with(0).validate().is_ok());
}

/// Every convolution of the network with weight `w` everywhere and zero bias.
fn constant_weights(w: f32) -> WeightSet {
    superpoint_graph::CONV_LAYERS
        .iter()
        .map(|l| {
            let n = l.out_channels * l.in_channels * l.kernel * l.kernel;
            (
                l.name.to_string(),
                superpoint_graph::ConvWeights {
                    out_channels: l.out_channels,
                    in_channels: l.in_channels,
                    kernel: l.kernel,
                    weight: vec![w; n],
                    bias: vec![0.0; l.out_channels],
                },
            )
        })
        .collect()
}

#[test]
fn evaluate_reports_weight_and_input_errors() {
    let g = superpoint(16, 16);
    let plane = Tensor::from_vec(1, 20, 24, vec![100u8; 480]).expect("shape");
    let mut weights = constant_weights(0.01);
    weights.remove("conv3b");
    let err = evaluate(&g, &weights, &plane, &[])
        .err()
        .expect("missing weights");
    assert!(
        matches!(err, EvalError::MissingWeights { ref node, .. } if node == "conv3b"),
        "{err}"
    );

    let mut weights = constant_weights(0.01);
    if let Some(w) = weights.get_mut("convPb") {
        w.bias.pop();
    }
    let err = evaluate(&g, &weights, &plane, &[]).err().expect("bad bias");
    assert!(
        matches!(err, EvalError::WeightShape { ref node, .. } if node == "convPb"),
        "{err}"
    );

    let empty = Tensor::<u8>::zeros(1, 0, 5);
    let err = evaluate(&g, &constant_weights(0.01), &empty, &[])
        .err()
        .expect("empty input");
    assert!(matches!(err, EvalError::BadInput { .. }), "{err}");
}

/// With every weight equal, the 1×1 head convolutions give all their output channels the same
/// value at each pixel, so the output is predictable: every score is 1/65, NMS keeps every
/// pixel (all tied), selection orders them by raster index, and every descriptor is the unit
/// vector (1/16, …, 1/16).
#[test]
fn evaluate_constant_image() {
    let g = superpoint_with(&SuperPointParams {
        frame_width: 16,
        frame_height: 16,
        nms_radius: 1,
        keypoint_threshold: 0.001,
        border: 4,
        max_keypoints: -1,
    });
    let plane = Tensor::from_vec(1, 32, 32, vec![200u8; 32 * 32]).expect("shape");
    let values = evaluate(
        &g,
        &constant_weights(0.01),
        &plane,
        &[names::RESIZE, names::SCORES],
    )
    .expect("evaluates");
    let resized = values.dense(names::RESIZE).expect("resize kept");
    assert!(resized.data.iter().all(|&v| v == 200.0 / 255.0));
    let scores = values.dense(names::SCORES).expect("scores kept");
    // The last detector layer gives all 65 channels the same logit: softmax is 1/65 everywhere.
    assert!(scores.data.iter().all(|&v| (v - 1.0 / 65.0).abs() < 1e-7));
    let keypoints = values.keypoints(names::KEYPOINTS).expect("keypoints");
    let xy: Vec<(u32, u32)> = keypoints.iter().map(|k| (k.x, k.y)).collect();
    let expected: Vec<(u32, u32)> = (4..12).flat_map(|y| (4..12).map(move |x| (x, y))).collect();
    assert_eq!(xy, expected);
    let (dim, desc) = values.descriptors(names::DESCRIPTORS).expect("descriptors");
    assert_eq!((dim, desc.len()), (256, 64 * 256));
    for row in desc.chunks(256) {
        assert!(
            row.iter().all(|&v| (v - 1.0 / 16.0).abs() < 1e-6),
            "{row:?}"
        );
    }
}
