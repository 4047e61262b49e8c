import Foundation
import Testing
import CredentialStoreTestSupport

/// A randomized fleet of 4 to 6 stores syncing through one folder, with changes, removals,
/// default choices, rekeys, untrusts, offline months and skewed clocks: after every quiet round
/// every store agrees, no removal is undone by an older value, and every acknowledged write is
/// there, replaced by a later change, or reported (docs/reliability.md, "Fleet simulation").
///
/// `FLEET_SIM_SEEDS` (how many seeds), `FLEET_SIM_FIRST_SEED` and `FLEET_SIM_OPS` (operations per
/// seed) make a longer run or replay one seed; `FLEET_SIM_TRACE` prints a failing seed's operations,
/// `FLEET_SIM_SUMMARY` what each seed met (docs/reliability.md, "Fleet simulation").
@Suite struct FleetSimulationTests {
    static let environment = ProcessInfo.processInfo.environment
    static let firstSeed = environment["FLEET_SIM_FIRST_SEED"].flatMap(UInt64.init) ?? 1
    static let seeds = Array(firstSeed..<firstSeed + (environment["FLEET_SIM_SEEDS"].flatMap(UInt64.init) ?? 20))
    static let operations = environment["FLEET_SIM_OPS"].flatMap(Int.init) ?? 500

    @Test(arguments: seeds)
    func aRandomFleetAgreesAfterEveryQuietRoundAndKeepsEveryAcknowledgedChange(seed: UInt64) throws {
        let simulation = try FleetSimulation(seed: seed)
        try simulation.run(operations: Self.operations)
        if Self.environment["FLEET_SIM_SUMMARY"] != nil { print(simulation.summary) }
        #expect(simulation.quietRounds >= 2, "seed \(seed): every run checks the fleet more than once")
    }
}
